"""What a namespace purge spends before its first unit of work and after its last one, read from
its histories: the fixed start and close that a short purge's rate pays in full. A unit of work is
a batch activity or a range child workflow; the start runs from the first run's start to the first
unit scheduled, the close from the last unit's end to the last run's close, each with the steps
that ran in it. What lies between them, the first unit scheduled to the last one's end, is the
purge's steady part: its rate is what a purge of any size keeps while it works."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from temporalio.api.enums.v1 import EventType
from temporalio.api.history.v1 import HistoryEvent

from icepurge.contract.activity_steps import PURGE_RANGE_BATCH
from tests.purge_helpers import local_activity_type


def _at(event: HistoryEvent) -> datetime:
    return event.event_time.ToDatetime()


def _activity(event: HistoryEvent) -> str | None:
    if event.event_type != EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
        return None
    return str(event.activity_task_scheduled_event_attributes.activity_type.name)


def _starts_unit(event: HistoryEvent) -> bool:
    return (
        _activity(event) == PURGE_RANGE_BATCH.name
        or event.event_type == EventType.EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED
    )


def _ends_unit(event: HistoryEvent, batches: set[int]) -> bool:
    if event.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED:
        return event.activity_task_completed_event_attributes.scheduled_event_id in batches
    return event.event_type == EventType.EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_COMPLETED


def _step(event: HistoryEvent) -> str | None:
    """The activity an event scheduled, or ran inside a workflow task (a local activity)."""
    in_task = local_activity_type(event)
    return f"{in_task} (in the task)" if in_task is not None else _activity(event)


def _steps(events: list[HistoryEvent]) -> str:
    """The activities scheduled (or run inside a workflow task) and the workflow tasks run within a
    span of events, with the time those tasks took from a worker's taking them to their completion
    (the worker's own part)."""
    names = [name for name in map(_step, events) if name is not None]
    taken = {event.event_id: _at(event) for event in events}
    completed = [
        event for event in events if event.event_type == EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED
    ]
    worked = sum(
        (_at(event) - taken[event.workflow_task_completed_event_attributes.started_event_id]).total_seconds()
        for event in completed
        if event.workflow_task_completed_event_attributes.started_event_id in taken
    )
    tasks = f"{len(completed)} workflow task(s), {worked * 1000:.0f} ms taken"
    return f"{', '.join(names) or 'no activity'}; {tasks}"


@dataclass(frozen=True)
class PurgeEnds:
    start: float
    between: float
    close: float
    start_steps: str
    close_steps: str

    def line(self) -> str:
        return (
            f"start {self.start:.3f} s ({self.start_steps}); between {self.between:.3f} s; "
            f"close {self.close:.3f} s ({self.close_steps})"
        )


def purge_ends(first: list[HistoryEvent], last: list[HistoryEvent]) -> PurgeEnds:
    """From the chain's first and last runs' histories (the same run when it has one): the start's,
    the steady part's and the close's seconds, the start and the close each with what ran in it."""
    start_end = next(index for index, event in enumerate(first) if _starts_unit(event))
    batches = {event.event_id for event in last if _activity(event) == PURGE_RANGE_BATCH.name}
    close_start = max(index for index, event in enumerate(last) if _ends_unit(event, batches))
    first_unit, last_end = _at(first[start_end]), _at(last[close_start])
    return PurgeEnds(
        start=(first_unit - _at(first[0])).total_seconds(),
        between=(last_end - first_unit).total_seconds(),
        close=(_at(last[-1]) - last_end).total_seconds(),
        start_steps=_steps(first[:start_end]),
        close_steps=_steps(last[close_start + 1 :]),
    )
