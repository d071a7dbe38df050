"""Sink configuration fails early with a message that says what to fix; signatures check."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from activities.event_sinks import SinkConfigError, load_sink
from activities.webhook_sink import signature, verify_signature
from tests.event_receivers import RecordingSink
from worker.settings import WorkerSettings
from worker.sinks import build_sinks

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
