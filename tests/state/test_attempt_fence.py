"""Attempts of one activity on one state location (icepurge.state.attempt_fence), as a worker
cut off from Temporal and the worker its activity was retried on see it: once the newer attempt
has touched the state location, the older one can neither write, flush nor delete there, and
each of its tries says why; attempts of other activities, and work outside any activity, are
not held back."""

from __future__ import annotations

from pathlib import Path

import pytest

from icepurge.contract.names import ERROR_STALE_ATTEMPT
from icepurge.state.attempt_fence import AttemptKey, StaleAttemptError, attempt_scope
from icepurge.state.state_store import StateStore


def _attempt(number: int, activity_id: str = "7") -> AttemptKey:
    return AttemptKey("purge-1", "run-1", activity_id, number)


def test_a_superseded_attempt_can_no_longer_change_state(tmp_path: Path) -> None:
    cut_off, elsewhere = StateStore(tmp_path.as_uri(), {}), StateStore(tmp_path.as_uri(), {})
    checkpoint = cut_off.uri("purge-1", "run-1", "chunks", "000003.json")
    with attempt_scope(_attempt(1)):
        cut_off.write(checkpoint, {"next_file": 1000})
    with attempt_scope(_attempt(2)):
        assert elsewhere.read(checkpoint) == b'{"next_file": 1000}'
        elsewhere.write(checkpoint, {"next_file": 3000})
    with attempt_scope(_attempt(1)):
        with pytest.raises(StaleAttemptError) as stale:
            cut_off.write(checkpoint, {"next_file": 2000})
        with pytest.raises(StaleAttemptError):
            cut_off.delete(checkpoint)
        with cut_off.holding(cut_off.uri("purge-1", "run-1")) as held:
            cut_off.write(cut_off.uri("purge-1", "run-1", "plan.json"), {"held": True})
            with pytest.raises(StaleAttemptError):
                cut_off.flush(held)
    assert elsewhere.read(checkpoint) == b'{"next_file": 3000}'
    assert elsewhere.read(cut_off.uri("purge-1", "run-1", "plan.json")) is None
    assert stale.value.type == ERROR_STALE_ATTEMPT
    assert "superseded by attempt 2" in stale.value.message


def test_the_claim_comes_before_the_retry_reads_what_it_resumes_from(tmp_path: Path) -> None:
    """The newer attempt claims on its first read: a write the older one tries after that read
    would otherwise overwrite the checkpoint the newer one resumed from."""
    cut_off, elsewhere = StateStore(tmp_path.as_uri(), {}), StateStore(tmp_path.as_uri(), {})
    record = cut_off.uri("purge-1", "run-1", "emitted.json")
    with attempt_scope(_attempt(1)):
        cut_off.write(record, {"chunks_emitted": 4})
    with attempt_scope(_attempt(2)):
        elsewhere.read(record)
    with attempt_scope(_attempt(1)), pytest.raises(StaleAttemptError):
        cut_off.write(record, {"chunks_emitted": 5})
    with attempt_scope(_attempt(3)):
        elsewhere.write(record, {"chunks_emitted": 6})
    with attempt_scope(_attempt(2)), pytest.raises(StaleAttemptError, match="superseded by attempt 3"):
        elsewhere.write(record, {"chunks_emitted": 7})


def test_other_activities_and_work_outside_activities_are_not_held_back(tmp_path: Path) -> None:
    state = StateStore(tmp_path.as_uri(), {})
    uri = state.uri("purge-1", "run-1", "report.json")
    with attempt_scope(_attempt(5, activity_id="9")):
        state.write(uri, {"by": "finalize"})
    with attempt_scope(_attempt(1, activity_id="10")):
        state.write(uri, {"by": "another activity"})
    state.write(uri, {"by": "a tool"})
    assert state.read(uri) == b'{"by": "a tool"}'
