"""Builds the event sinks a worker's settings name."""

from __future__ import annotations

from collections.abc import Callable

from icepurge.activities.signals.event_sinks import LOG_SINK, WEBHOOK_SINK, EventSink, LogSink, load_sink
from icepurge.activities.signals.webhook_sink import WebhookSink
from icepurge.worker.settings import WorkerSettings


def build_sinks(settings: WorkerSettings) -> list[EventSink]:
    def webhook() -> EventSink:
        # The settings validator guarantees both once 'webhook' is configured.
        assert settings.webhook_url is not None and settings.webhook_secret is not None
        return WebhookSink(
            settings.webhook_url,
            settings.webhook_secret.get_secret_value(),
            settings.webhook_max_attempts,
            settings.webhook_timeout_seconds,
            settings.webhook_cooldown_seconds,
        )

    builtins: dict[str, Callable[[], EventSink]] = {LOG_SINK: LogSink, WEBHOOK_SINK: webhook}
    return [load_sink(spec, builtins) for spec in settings.event_sinks]
