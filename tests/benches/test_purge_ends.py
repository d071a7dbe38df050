"""The control-plane bench's split of a namespace purge's time into its start, its steady part and
its close: BENCHMARKS' steady rates and fixed costs rest on it."""

from __future__ import annotations

import pytest
from temporalio.api.enums.v1 import EventType

from bench.purge_ends import purge_ends
from icepurge.contract.activity_steps import DELIVER_EVENTS, DROP_NAMESPACES, ENUMERATE, PURGE_RANGE_BATCH
from tests.benches.built_histories import History


def _started(history: History) -> None:
    history.add(0.0, EventType.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED)
    history.workflow_task(started=0.002, completed=0.017)
    history.activity(ENUMERATE.name, scheduled=0.02, started=0.03, closed=0.05)
    history.activity(DELIVER_EVENTS.name, scheduled=0.02, started=0.03, closed=0.04)
    history.workflow_task(started=0.051, completed=0.07)


def test_a_run_of_batches_splits_at_its_first_batch_scheduled_and_its_last_one_ended() -> None:
    history = History()
    _started(history)
    history.activity(PURGE_RANGE_BATCH.name, scheduled=0.08, started=0.09, closed=0.5)
    history.activity(PURGE_RANGE_BATCH.name, scheduled=0.08, started=0.1, closed=0.9)
    history.workflow_task(started=0.91, completed=0.92)
    history.activity(DROP_NAMESPACES.name, scheduled=0.93, started=0.94, closed=0.96)
    # An activity that is no batch ends after the last batch: the close's, not the steady part's.
    history.activity(DELIVER_EVENTS.name, scheduled=0.97, started=0.98, closed=0.99)
    history.add(1.0, EventType.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED)

    ends = purge_ends(history.events, history.events)

    assert ends.start == pytest.approx(0.08)
    assert ends.between == pytest.approx(0.82)
    assert ends.close == pytest.approx(0.1)
    # The start's two workflow tasks were taken 15 and 19 ms; the close's, 10.
    assert ends.start_steps == f"{ENUMERATE.name}, {DELIVER_EVENTS.name}; 2 workflow task(s), 34 ms taken"
    assert (
        ends.close_steps == f"{DROP_NAMESPACES.name}, {DELIVER_EVENTS.name}; 1 workflow task(s), 10 ms taken"
    )


def test_a_tree_over_two_runs_splits_at_the_first_range_started_and_the_last_one_closed() -> None:
    first = History()
    _started(first)
    first.add(0.1, EventType.EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED)
    first.add(3.0, EventType.EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_COMPLETED)
    first.add(3.1, EventType.EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW)
    last = History()
    last.add(3.2, EventType.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED)
    last.add(3.3, EventType.EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED)
    last.add(6.0, EventType.EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_COMPLETED)
    last.activity(DROP_NAMESPACES.name, scheduled=6.1, started=6.1, closed=6.2)
    last.add(6.25, EventType.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED)

    ends = purge_ends(first.events, last.events)

    assert (ends.start, ends.between, ends.close) == pytest.approx((0.1, 5.9, 0.25))
    assert ends.close_steps == f"{DROP_NAMESPACES.name}; 0 workflow task(s), 0 ms taken"


def test_the_steps_run_inside_a_workflow_task_are_named_among_the_start_s_and_the_close_s() -> None:
    history = History()
    history.add(0.0, EventType.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED)
    history.workflow_task(started=0.002, completed=0.03)
    history.in_task(ENUMERATE.name, recorded=0.03)
    history.activity(DELIVER_EVENTS.name, scheduled=0.03, started=0.031, closed=0.04)
    history.activity(PURGE_RANGE_BATCH.name, scheduled=0.03, started=0.035, closed=0.9)
    history.workflow_task(started=0.905, completed=0.915)
    history.activity(DROP_NAMESPACES.name, scheduled=0.915, started=0.92, closed=0.93)
    history.workflow_task(started=0.932, completed=0.94)
    history.in_task(DELIVER_EVENTS.name, recorded=0.94)
    history.add(0.94, EventType.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED)

    ends = purge_ends(history.events, history.events)

    assert (ends.start, ends.between, ends.close) == pytest.approx((0.03, 0.87, 0.04))
    assert ends.start_steps == (
        f"{ENUMERATE.name} (in the task), {DELIVER_EVENTS.name}; 1 workflow task(s), 28 ms taken"
    )
    assert ends.close_steps == (
        f"{DROP_NAMESPACES.name}, {DELIVER_EVENTS.name} (in the task); 2 workflow task(s), 18 ms taken"
    )
