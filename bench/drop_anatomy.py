"""Where a drop's wait went, read from its purge's workflow history: from the moment the client
sent its DELETE, when the purge started, then each step up to the drop — how long it queued for a
worker slot (scheduled → started), how long it ran, on which attempt — and the workflow tasks'
own queueing, up to the workflow task that completes the front door's wait. A held table's drop
ends with its hold (hold_namespace), which runs inside a workflow task (a local activity) unless
that attempt failed."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from temporalio.api.enums.v1 import EventType
from temporalio.api.history.v1 import HistoryEvent
from temporalio.client import Client

from icepurge.contract.names import DROP_TABLE_ACTIVITY, HOLD_TABLE_ACTIVITY, LOAD_PLAN_AND_DROP_ACTIVITY
from tests.purge_helpers import local_activity_type

_ACTIVITY_CLOSED = {
    EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED: "activity_task_completed_event_attributes",
    EventType.EVENT_TYPE_ACTIVITY_TASK_FAILED: "activity_task_failed_event_attributes",
    EventType.EVENT_TYPE_ACTIVITY_TASK_TIMED_OUT: "activity_task_timed_out_event_attributes",
}


_TASK_STEPS = (
    EventType.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED,
    EventType.EVENT_TYPE_WORKFLOW_TASK_STARTED,
    EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED,
)


def _at(event: HistoryEvent) -> datetime:
    return event.event_time.ToDatetime()


async def drop_anatomy(client: Client, purge_id: str, sent: datetime) -> str:
    """One line: the purge's steps up to its drop, seconds from `sent` (the DELETE, naive UTC)."""
    history = await client.get_workflow_handle(purge_id).fetch_history()
    parts: list[str] = []
    scheduled: dict[int, tuple[str, datetime]] = {}
    started: dict[int, tuple[datetime, int]] = {}
    task_wait = 0.0
    task_scheduled: datetime | None = None
    task_started: datetime | None = None
    for event in history.events:
        kind = event.event_type
        if kind == EventType.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED:
            parts.append(f"started +{(_at(event) - sent).total_seconds():.2f}")
        elif kind == EventType.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED:
            task_scheduled = _at(event)
        elif kind == EventType.EVENT_TYPE_WORKFLOW_TASK_STARTED and task_scheduled is not None:
            task_started = _at(event)
            task_wait += (task_started - task_scheduled).total_seconds()
        elif local_activity_type(event) == HOLD_TABLE_ACTIVITY and task_started is not None:
            # Recorded with the workflow task that ran it: the task's time is the hold's and more.
            ran = (_at(event) - task_started).total_seconds()
            parts.append(f"hold_table in the workflow task, which ran {ran:.2f}")
            parts.append(f"held +{(_at(event) - sent).total_seconds():.2f}")
            parts.append(f"workflow tasks queued {task_wait:.2f}")
            parts.append(_answered(history.events, event.event_id, sent))
            break
        elif kind == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
            name = event.activity_task_scheduled_event_attributes.activity_type.name
            scheduled[event.event_id] = (name, _at(event))
        elif kind == EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED:
            attributes = event.activity_task_started_event_attributes
            started[attributes.scheduled_event_id] = (_at(event), attributes.attempt)
        elif kind in _ACTIVITY_CLOSED:
            scheduled_id = getattr(event, _ACTIVITY_CLOSED[kind]).scheduled_event_id
            name, queued_at = scheduled[scheduled_id]
            began, attempt = started.get(scheduled_id, (queued_at, 1))
            queued = (began - queued_at).total_seconds()
            ran = (_at(event) - began).total_seconds()
            parts.append(f"{name} queued {queued:.2f} ran {ran:.2f} (attempt {attempt})")
            if name in (HOLD_TABLE_ACTIVITY, DROP_TABLE_ACTIVITY, LOAD_PLAN_AND_DROP_ACTIVITY):
                # A held table left its identifier with the hold: the answer needs no more.
                left = "held" if name == HOLD_TABLE_ACTIVITY else "dropped"
                parts.append(f"{left} +{(_at(event) - sent).total_seconds():.2f}")
                parts.append(f"workflow tasks queued {task_wait:.2f}")
                parts.append(_answered(history.events, event.event_id, sent))
                break
    return "; ".join(parts)


def _answered(events: Sequence[HistoryEvent], dropped_id: int, sent: datetime) -> str:
    """The front door's wait (its update) completing: in the workflow task that saw the drop, or
    in one after it."""
    times: dict[int, datetime] = {}
    for event in events:
        if event.event_id <= dropped_id:
            continue
        if event.event_type == EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_COMPLETED:
            done = f"done +{(_at(event) - sent).total_seconds():.2f}"
            if len(times) < len(_TASK_STEPS):
                return f"the wait completed in the same workflow task, {done}"
            scheduled, started, completed = (times[step] for step in _TASK_STEPS)
            return (
                f"the workflow task after it queued {(started - scheduled).total_seconds():.2f}"
                f" ran {(completed - started).total_seconds():.2f}, {done}"
            )
        if event.event_type in _TASK_STEPS and event.event_type not in times:
            times[event.event_type] = _at(event)
    return "the wait's completion: not in the history"
