"""A history as a query that comes just as a step inside the workflow task ends makes it: that task
ends with the step's marker, and the code after the step runs in a workflow task of its own. The
replay still hands the step's result to the code of the task before, as it does every local
activity's, where the patch markers of the next task are not known yet: a run that consulted a
patch only after such a step read it False on replay, and its replay failed."""

from __future__ import annotations

import copy
from typing import Any

from tests.purge_helpers import LOCAL_ACTIVITY_MARKER

# The parent's own event, in the parent's history: not one of this history's.
FOREIGN_IDS = frozenset({"parentInitiatedEventId"})


def _attributes(event: dict[str, Any]) -> dict[str, Any]:
    return next(value for key, value in event.items() if key.endswith("EventAttributes"))


def _is_step_in_task(event: dict[str, Any]) -> bool:
    marker = event.get("markerRecordedEventAttributes")
    return marker is not None and marker.get("markerName") == LOCAL_ACTIVITY_MARKER


def _is_command(event: dict[str, Any]) -> bool:
    return "workflowTaskCompletedEventId" in _attributes(event)


def _task_events(marker: dict[str, Any], scheduled: dict[str, Any], first_id: int) -> list[dict[str, Any]]:
    """A workflow task scheduled, started and completed at the marker's time."""
    attributes = scheduled["workflowTaskScheduledEventAttributes"]
    stamp = {"eventTime": marker["eventTime"], "taskId": marker.get("taskId", "0")}
    scheduled_id, started_id, completed_id = (str(first_id + offset) for offset in range(3))
    return [
        {
            "eventId": scheduled_id,
            **stamp,
            "eventType": "EVENT_TYPE_WORKFLOW_TASK_SCHEDULED",
            "workflowTaskScheduledEventAttributes": {**copy.deepcopy(attributes), "attempt": 1},
        },
        {
            "eventId": started_id,
            **stamp,
            "eventType": "EVENT_TYPE_WORKFLOW_TASK_STARTED",
            "workflowTaskStartedEventAttributes": {
                "scheduledEventId": scheduled_id,
                "identity": "split",
                "requestId": f"split-{scheduled_id}",
            },
        },
        {
            "eventId": completed_id,
            **stamp,
            "eventType": "EVENT_TYPE_WORKFLOW_TASK_COMPLETED",
            "workflowTaskCompletedEventAttributes": {
                "scheduledEventId": scheduled_id,
                "startedEventId": started_id,
                "identity": "split",
            },
        },
    ]


def _renumber(value: Any, new_ids: dict[str, str]) -> Any:
    if isinstance(value, dict):
        return {
            key: new_ids.get(item, item)
            if key.endswith("EventId") and key not in FOREIGN_IDS and isinstance(item, str)
            else _renumber(item, new_ids)
            for key, item in value.items()
        }
    if isinstance(value, list):
        return [_renumber(item, new_ids) for item in value]
    return value


def split_after_steps_in_task(history: dict[str, Any]) -> tuple[dict[str, Any], int]:
    """The history (its JSON form) with a workflow task ending after every step inside the task
    that commands of the same task follow, and how many such splits it holds."""
    events: list[dict[str, Any]] = history["events"]
    new_ids: dict[str, str] = {}
    splits_after: set[str] = set()
    shift = 0
    for index, event in enumerate(events):
        new_ids[event["eventId"]] = str(int(event["eventId"]) + shift)
        following = events[index + 1] if index + 1 < len(events) else None
        if _is_step_in_task(event) and following is not None and _is_command(following):
            splits_after.add(event["eventId"])
            shift += 3
    split: list[dict[str, Any]] = []
    last_scheduled: dict[str, Any] | None = None
    completed_by: str | None = None
    for event in events:
        renumbered = _renumber(event, new_ids)
        renumbered["eventId"] = new_ids[event["eventId"]]
        if "workflowTaskScheduledEventAttributes" in event:
            last_scheduled = event
        if "workflowTaskCompletedEventAttributes" in event:
            completed_by = None
        if completed_by is not None and _is_command(renumbered):
            _attributes(renumbered)["workflowTaskCompletedEventId"] = completed_by
        split.append(renumbered)
        if event["eventId"] in splits_after and last_scheduled is not None:
            added = _task_events(renumbered, last_scheduled, int(renumbered["eventId"]) + 1)
            split.extend(added)
            completed_by = added[-1]["eventId"]
    return {**history, "events": split}, len(splits_after)
