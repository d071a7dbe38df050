"""Where a purge's events go. A sink is anything with a `name` and a `deliver(event)` that
raises when the event didn't get through; the worker loads them by name or import path:

    ICEPURGE_EVENT_SINKS='["log", "webhook", "my_company.purge_events:KafkaSink"]'

An import path names a class or factory called without arguments (it reads its own config)."""

from __future__ import annotations

import importlib
import logging
import sys
from collections.abc import Callable
from typing import Protocol, runtime_checkable

from icepurge.contract.events import PurgeEvent

LOG_SINK = "log"
WEBHOOK_SINK = "webhook"


@runtime_checkable
class EventSink(Protocol):
    name: str

    def deliver(self, event: PurgeEvent) -> None: ...


class SinkConfigError(ValueError):
    """A configured sink can't be loaded; the message names it and says what to fix."""


class LogSink:
    """One JSON object per line on the worker's stderr, for log shippers to pick up as is."""

    name = LOG_SINK

    def __init__(self) -> None:
        self._log = logging.getLogger("icepurge.events")
        if not self._log.handlers:
            handler = logging.StreamHandler(sys.stderr)
            handler.setFormatter(logging.Formatter("%(message)s"))
            self._log.addHandler(handler)
            self._log.setLevel(logging.INFO)
            self._log.propagate = False

    def deliver(self, event: PurgeEvent) -> None:
        self._log.info(event.model_dump_json())


def load_sink(spec: str, builtins: dict[str, Callable[[], EventSink]]) -> EventSink:
    factory = builtins.get(spec)
    if factory is None:
        module_name, sep, attribute = spec.partition(":")
        if not sep or not module_name or not attribute:
            known = ", ".join(sorted(builtins))
            raise SinkConfigError(f"event sink {spec!r}: use one of {known} or 'package.module:Name'")
        try:
            factory = getattr(importlib.import_module(module_name), attribute)
        except (ImportError, AttributeError) as error:
            raise SinkConfigError(f"event sink {spec!r} can't be imported: {error}") from None
    sink = factory()
    if not isinstance(sink, EventSink):
        raise SinkConfigError(f"event sink {spec!r} has no `name` and `deliver(event)`")
    return sink
