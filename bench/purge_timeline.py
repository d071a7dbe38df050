"""Where a purge's time went, read from its workflow history: each step from its activity's
scheduling to its close (retries included), over every run of the purge."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from temporalio.api.enums.v1 import EventType
from temporalio.client import Client

from icepurge.contract.names import PLAN_ACTIVITY, PLAN_AND_FINISH_ACTIVITY

_CLOSED = {
    EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED: "activity_task_completed_event_attributes",
    EventType.EVENT_TYPE_ACTIVITY_TASK_FAILED: "activity_task_failed_event_attributes",
    EventType.EVENT_TYPE_ACTIVITY_TASK_TIMED_OUT: "activity_task_timed_out_event_attributes",
    EventType.EVENT_TYPE_ACTIVITY_TASK_CANCELED: "activity_task_canceled_event_attributes",
}


@dataclass
class Timeline:
    """Seconds from the first run's start to the last run's close, each step's span, and the
    events of every run's history."""

    total: float = 0.0
    events: int = 0
    spans: dict[str, list[tuple[datetime, datetime]]] = field(default_factory=dict)

    def seconds(self, step: str) -> float:
        """The step's wall-clock span: its first scheduling to its last close."""
        spans = self.spans.get(step, [])
        return (
            (max(end for _, end in spans) - min(start for start, _ in spans)).total_seconds()
            if spans
            else 0.0
        )

    def overlap(self, first: str, second: str) -> float:
        """Seconds during which both steps ran."""
        if not self.spans.get(first) or not self.spans.get(second):
            return 0.0
        start = max(min(s for s, _ in self.spans[first]), min(s for s, _ in self.spans[second]))
        end = min(max(e for _, e in self.spans[first]), max(e for _, e in self.spans[second]))
        return max(0.0, (end - start).total_seconds())


def planning_step(timeline: Timeline) -> str:
    """The step that planned: a purge by snapshot plans in plan_and_finish_small, which hands a plan
    too big (or bound for Spark) to finish at once on to chunk activities."""
    return PLAN_AND_FINISH_ACTIVITY if timeline.spans.get(PLAN_AND_FINISH_ACTIVITY) else PLAN_ACTIVITY


async def run_events(client: Client, workflow_id: str) -> list[int]:
    """Each run's history events, read from its history: the visibility listing can still give a
    run just closed a history length of 0."""
    return [
        len((await client.get_workflow_handle(workflow_id, run_id=execution.run_id).fetch_history()).events)
        async for execution in client.list_workflows(f"WorkflowId='{workflow_id}'")
    ]


async def purge_timeline(client: Client, purge_id: str) -> Timeline:
    timeline = Timeline()
    first: datetime | None = None
    last: datetime | None = None
    async for execution in client.list_workflows(f"WorkflowId='{purge_id}'"):
        history = await client.get_workflow_handle(purge_id, run_id=execution.run_id).fetch_history()
        timeline.events += len(history.events)
        scheduled: dict[int, tuple[str, datetime]] = {}
        for event in history.events:
            at = event.event_time.ToDatetime()
            first = at if first is None or at < first else first
            last = at if last is None or at > last else last
            if event.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
                name = event.activity_task_scheduled_event_attributes.activity_type.name
                scheduled[event.event_id] = (name, at)
            elif event.event_type in _CLOSED:
                attributes = getattr(event, _CLOSED[event.event_type])
                name, started = scheduled[attributes.scheduled_event_id]
                timeline.spans.setdefault(name, []).append((started, at))
    if first is not None and last is not None:
        timeline.total = (last - first).total_seconds()
    return timeline
