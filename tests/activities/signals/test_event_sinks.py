"""Sink configuration fails early with a message that says what to fix; signatures check."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from pydantic import ValidationError

from icepurge.activities.signals.event_sinks import SinkConfigError, load_sink
from icepurge.activities.signals.webhook_sink import (
    WebhookRefusedError,
    WebhookSink,
    WebhookUnavailableError,
    signature,
    verify_signature,
)
from icepurge.contract.events import EventKind, PurgeEvent
from icepurge.contract.states import PurgeState
from icepurge.devstack.webhook_receiver import WEBHOOK_SECRET, webhook_receiver
from icepurge.worker.settings import WorkerSettings
from icepurge.worker.sinks import build_sinks
from tests.event_receivers import RecordingSink

STATE = "s3://icepurge-state/purges"


def test_sinks_load_by_name_and_by_import_path() -> None:
    settings = WorkerSettings(
        state_location=STATE,
        event_sinks=["log", "webhook", "tests.event_receivers:RecordingSink"],
        webhook_url="http://127.0.0.1:9/hook",
        webhook_secret="s",
    )
    sinks = build_sinks(settings)
    assert [sink.name for sink in sinks] == ["log", "webhook", "recording"]
    assert isinstance(sinks[2], RecordingSink)


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("kafka", "use one of log, webhook or 'package.module:Name'"),
        ("no_such_package.sinks:Sink", "can't be imported"),
        ("tests.event_receivers:NoSuchSink", "can't be imported"),
        ("collections:OrderedDict", "has no `name` and `deliver(event)`"),
    ],
)
def test_a_bad_sink_is_refused_by_name(spec: str, message: str) -> None:
    with pytest.raises(SinkConfigError) as raised:
        load_sink(spec, {"log": RecordingSink, "webhook": RecordingSink})
    assert message in str(raised.value)
    assert spec in str(raised.value)


@pytest.mark.parametrize(
    "overrides",
    [
        {"event_sinks": ["webhook"]},
        {"event_sinks": ["webhook"], "webhook_url": "http://127.0.0.1:9/hook"},
        {"event_sinks": ["webhook"], "webhook_url": "ftp://host/hook", "webhook_secret": "s"},
    ],
)
def test_an_incomplete_webhook_configuration_is_refused(overrides: dict[str, object]) -> None:
    with pytest.raises(ValidationError, match="ICEPURGE_WEBHOOK_URL"):
        WorkerSettings.model_validate({"state_location": STATE, **overrides})


def test_a_signature_binds_secret_timestamp_and_body() -> None:
    signed = signature("secret", "1700000000", b'{"a":1}')
    assert verify_signature("secret", "1700000000", b'{"a":1}', signed)
    assert not verify_signature("other", "1700000000", b'{"a":1}', signed)
    assert not verify_signature("secret", "1700000001", b'{"a":1}', signed)
    assert not verify_signature("secret", "1700000000", b'{"a":2}', signed)


def _event() -> PurgeEvent:
    now = datetime.now(UTC)
    return PurgeEvent(
        event_id="p:r:0",
        sequence=0,
        kind=EventKind.STARTED,
        purge_id="p",
        run_id="r",
        catalog="c",
        namespace=["n"],
        table="t",
        requested_by="me",
        request_id=None,
        state=PurgeState.PENDING,
        files_total=0,
        files_done=0,
        files_deleted=0,
        files_failed=0,
        bytes_deleted=0,
        chunks_done=0,
        chunks_total=0,
        rate_files_per_second=None,
        eta_seconds=None,
        started_at=now,
        finished_at=None,
        occurred_at=now,
    )


def test_an_unavailable_receiver_cools_the_sink_down_a_refusing_one_does_not() -> None:
    with webhook_receiver(fail_with=503) as (url, received):
        sink = WebhookSink(url, WEBHOOK_SECRET, max_attempts=2, timeout_seconds=2, cooldown_seconds=60)
        with pytest.raises(WebhookUnavailableError):
            sink.deliver(_event())
        assert received.attempts == 2
        received.fail_with = None
        with pytest.raises(WebhookUnavailableError, match="cooling down"):
            sink.deliver(_event())
        assert received.attempts == 2, "a cooling sink doesn't call the receiver"

    with webhook_receiver(fail_with=400) as (url, received):
        sink = WebhookSink(url, WEBHOOK_SECRET, max_attempts=3, timeout_seconds=2, cooldown_seconds=60)
        with pytest.raises(WebhookRefusedError, match="HTTP 400"):
            sink.deliver(_event())
        assert received.attempts == 1, "a refusal is not retried"
        received.fail_with = None
        sink.deliver(_event())
        assert [event.event_id for event in received.events()] == ["p:r:0"]
        assert received.signatures_valid == [True]
