"""The anatomy benchmark's cut of a workflow history: the BENCHMARKS figures for where a small
purge's seconds go rest on it."""

from __future__ import annotations

import pytest
from temporalio.api.enums.v1 import EventType

from bench.purge_anatomy import IDLE, TASKS, WAITED, segments
from icepurge.contract.names import CHUNK_ACTIVITY, FINALIZE_ACTIVITY, PLAN_ACTIVITY
from tests.benches.built_histories import History


def test_a_history_is_cut_into_what_ran_at_each_instant() -> None:
    history = History()
    history.add(0.0, EventType.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED)
    history.add(0.05, EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED)
    history.activity(PLAN_ACTIVITY, scheduled=0.1, started=0.11, closed=0.5)
    # Two chunks, the first beside planning's last 0.1 s, the second after a 0.05 s gap.
    history.activity(CHUNK_ACTIVITY, scheduled=0.4, started=0.4, closed=1.0)
    history.activity(CHUNK_ACTIVITY, scheduled=1.05, started=1.06, closed=1.5)
    history.add(1.52, EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED)
    history.activity(FINALIZE_ACTIVITY, scheduled=1.55, started=1.55, closed=1.7)
    history.add(1.8, EventType.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED)
    history.events.sort(key=lambda event: event.event_time.ToDatetime())

    seconds, span = segments(history.events)

    assert span == pytest.approx(1.8)
    assert seconds["planning"] == pytest.approx(0.3)
    assert seconds["planning + chunks"] == pytest.approx(0.1)
    assert seconds["chunks"] == pytest.approx(0.5 + 0.45)
    assert seconds["finalize"] == pytest.approx(0.15)
    # Before planning, between the chunks, before finalize, after it.
    assert seconds[IDLE] == pytest.approx(0.1 + 0.05 + 0.05 + 0.1)
    assert seconds[WAITED] == pytest.approx(0.01 + 0.01)
    assert seconds[TASKS] == 2
    assert sum(value for key, value in seconds.items() if key not in {WAITED, TASKS}) == pytest.approx(span)
