"""Workflow histories built event by event, at the seconds a test gives, for the benches that read
histories."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

from temporalio.api.enums.v1 import EventType
from temporalio.api.history.v1 import HistoryEvent

from tests.purge_helpers import LOCAL_ACTIVITY_MARKER

START = datetime(2026, 11, 23, tzinfo=UTC)


class History:
    def __init__(self) -> None:
        self.events: list[HistoryEvent] = []

    def add(self, seconds: float, kind: EventType.ValueType) -> HistoryEvent:
        event = HistoryEvent(event_id=len(self.events) + 1, event_type=kind)
        event.event_time.FromDatetime(START + timedelta(seconds=seconds))
        self.events.append(event)
        return event

    def activity(self, name: str, scheduled: float, started: float, closed: float) -> None:
        event = self.add(scheduled, EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED)
        event.activity_task_scheduled_event_attributes.activity_type.name = name
        begun = self.add(started, EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED)
        begun.activity_task_started_event_attributes.scheduled_event_id = event.event_id
        done = self.add(closed, EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED)
        done.activity_task_completed_event_attributes.scheduled_event_id = event.event_id

    def workflow_task(self, started: float, completed: float) -> None:
        begun = self.add(started, EventType.EVENT_TYPE_WORKFLOW_TASK_STARTED)
        done = self.add(completed, EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED)
        done.workflow_task_completed_event_attributes.started_event_id = begun.event_id

    def in_task(self, name: str, recorded: float) -> None:
        """A local activity's marker: the step ran inside the workflow task that recorded it."""
        event = self.add(recorded, EventType.EVENT_TYPE_MARKER_RECORDED)
        marker = event.marker_recorded_event_attributes
        marker.marker_name = LOCAL_ACTIVITY_MARKER
        marker.details["data"].payloads.add().data = json.dumps({"activity_type": name}).encode()
