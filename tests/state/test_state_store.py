"""The state location on S3: one request an operation through boto3, and the FileIO's answers
(an absent object reads as None, deleting it twice is fine, a refused one says why)."""

from __future__ import annotations

import uuid

import pytest

from icepurge.activities.plan.plan_model import PlanCheckpoint
from icepurge.devstack.s3_proxy import s3_proxy, through_proxy
from icepurge.devstack.stack import STATE_BUCKET, EmbeddedStack
from icepurge.state.state_store import StateStore
from tests.store import S3Store


def test_an_s3_state_location_takes_one_request_an_operation(s3: S3Store, stack: EmbeddedStack) -> None:
    """Regression: PyArrow's file system sent a HEAD before every read of a checkpoint or chunk."""
    with s3_proxy(stack.ports.s3) as (port, faults):
        state = StateStore(
            f"s3://{STATE_BUCKET}/tests-{uuid.uuid4().hex[:6]}", through_proxy(s3.properties, port)
        )
        plain, packed = state.uri("p", "plain.json"), state.uri("p", "packed.json")
        checkpoint = PlanCheckpoint(reach_saved=True, manifests_done=7)
        state.write(plain, checkpoint)
        state.write(packed, {"files": ["a"] * 1000}, compress=True)
        assert PlanCheckpoint.model_validate_json(state.read(plain) or b"") == checkpoint
        assert state.read(packed) == b'{"files": [' + b", ".join([b'"a"'] * 1000) + b"]}"
        assert state.read(state.uri("p", "never-written.json")) is None
        state.delete(plain)
        state.delete(plain)
        assert state.read(plain) is None
    assert faults.requests["HEAD"] == 0
    assert faults.requests["GET"] == 4
    assert faults.requests["PUT"] == 2
    assert faults.requests["DELETE"] == 2


def test_a_state_location_it_may_not_read_says_which_object_and_why(s3: S3Store) -> None:
    refused = {**s3.properties, "s3.secret-access-key": "not-the-secret"}
    state = StateStore(f"s3://{STATE_BUCKET}/tests", refused)
    with pytest.raises(OSError, match=f"s3://{STATE_BUCKET}/tests/x.json") as raised:
        state.read(state.uri("x.json"))
    assert "not-the-secret" not in str(raised.value)
