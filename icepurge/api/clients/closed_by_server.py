"""A purge whose workflow the server closed without the purge closing it: terminated by hand
(`temporal workflow terminate`), timed out, or failed outside the purge's own failure path. Its
last queried status still says where it stood (SCHEDULED, DELETING): shown as it is, the purge
would look running forever. Here it is shown closed, FAILED (CANCELLED for a cancellation), with
the server's close time and reason, in its status and in listings."""

from __future__ import annotations

from typing import Any, TypeVar

from temporalio.client import (
    WorkflowExecutionDescription,
    WorkflowExecutionStatus,
    WorkflowHandle,
    WorkflowHistoryEventFilterType,
)

from icepurge.contract.namespace_status import (
    NAMESPACE_TERMINAL_STATES,
    NamespacePurgeState,
    NamespacePurgeStatus,
)
from icepurge.contract.states import TERMINAL_STATES, PurgeState
from icepurge.contract.status import PurgeStatus

Status = TypeVar("Status", PurgeStatus, NamespacePurgeStatus)

ERROR_CLOSED_BY_SERVER = "ClosedByServer"
# What a listing, which reads no history, says of each.
_CLOSED_ELSEWHERE = {
    WorkflowExecutionStatus.TERMINATED: "its workflow was terminated",
    WorkflowExecutionStatus.TIMED_OUT: "its workflow timed out",
    WorkflowExecutionStatus.FAILED: "its workflow failed",
    WorkflowExecutionStatus.CANCELED: "its workflow was cancelled",
}
_FINAL = frozenset(state.value for state in TERMINAL_STATES | NAMESPACE_TERMINAL_STATES)


def closed_elsewhere(
    description: WorkflowExecutionDescription, status: PurgeStatus | NamespacePurgeStatus
) -> bool:
    """The server closed the workflow, and the purge's own status never said so."""
    return status.finished_at is None and description.status in _CLOSED_ELSEWHERE


def listed_closed(execution: WorkflowExecutionStatus | None, state: str | None) -> tuple[str, str] | None:
    """The state and error a listing shows for a purge the server closed while its own state (a
    search attribute) was not final; None for any other."""
    if execution not in _CLOSED_ELSEWHERE or state in _FINAL:
        return None
    closed = "CANCELLED" if execution == WorkflowExecutionStatus.CANCELED else "FAILED"
    return closed, _CLOSED_ELSEWHERE[execution]


async def shown_closed(
    handle: WorkflowHandle[Any, Any], description: WorkflowExecutionDescription, status: Status
) -> Status:
    """`status` closed as the server closed its workflow (as it is, if the server didn't)."""
    closed = listed_closed(description.status, None)
    if closed is None:
        return status
    closed_state, said = closed
    reason = await _reason(handle, said)
    # Its deletes stopped where they were: what it had not deleted stays.
    if isinstance(status, PurgeStatus):
        state: PurgeState | NamespacePurgeState = PurgeState(closed_state)
        what_now = f"what it had not deleted stays: icepurge purge rerun {status.purge_id} finishes it"
    else:
        state = NamespacePurgeState(closed_state)
        what_now = "what it had not purged stays: start the namespace purge again to purge the rest"
    closed_at = description.close_time
    return status.model_copy(
        update={
            "state": state,
            "finished_at": closed_at,
            "updated_at": closed_at,
            "last_error": f"{reason}; {what_now}",
            "error_type": ERROR_CLOSED_BY_SERVER,
        }
    )


async def _reason(handle: WorkflowHandle[Any, Any], said: str) -> str:
    """What a listing `said`, with the reason a termination gave or the failure's message."""
    async for event in handle.fetch_history_events(
        event_filter_type=WorkflowHistoryEventFilterType.CLOSE_EVENT
    ):
        if event.HasField("workflow_execution_terminated_event_attributes"):
            given = event.workflow_execution_terminated_event_attributes.reason
            return f"{said}: {given or 'no reason given'}"
        if event.HasField("workflow_execution_failed_event_attributes"):
            return f"{said}: {event.workflow_execution_failed_event_attributes.failure.message}"
    return said
