"""What a client does the same way for a table purge and a namespace purge, each one workflow:
its status (live from the query, a completed one's from its result, one the server closed shown
closed), its final report, and its controls (pause, resume, the rate budget) as workflow updates."""

from __future__ import annotations

from typing import Any, Generic, TypeVar

from temporalio.client import Client, WorkflowExecutionDescription, WorkflowExecutionStatus
from temporalio.service import RPCError

from icepurge.api.clients.closed_by_server import Status, closed_elsewhere, shown_closed
from icepurge.api.clients.temporal_results import result_of, run_update, translate_rpc_error
from icepurge.contract.controls import rate_budget_change
from icepurge.contract.names import PAUSE_UPDATE, RATE_BUDGET_UPDATE, RESUME_UPDATE, STATUS_QUERY, TASK_QUEUE

ReportT = TypeVar("ReportT")


class WorkflowPurges(Generic[Status, ReportT]):
    status_type: type[Status]
    report_type: type[ReportT]

    def __init__(self, client: Client, task_queue: str = TASK_QUEUE) -> None:
        self._client = client
        self._task_queue = task_queue

    async def status(self, purge_id: str) -> Status:
        return (await self._status_of(purge_id))[0]

    async def _status_of(self, purge_id: str) -> tuple[Status, WorkflowExecutionDescription | None]:
        """The status, and the server's description of the workflow while it runs (None once
        the status came from its result, or from the server's own close)."""
        handle = self._client.get_workflow_handle(purge_id, result_type=self.report_type)
        try:
            description = await handle.describe()
            if description.status == WorkflowExecutionStatus.COMPLETED:
                report: Any = await handle.result()
                completed: Status = report.status
                return completed, None
            status = await handle.query(STATUS_QUERY, result_type=self.status_type)
            if closed_elsewhere(description, status):
                return await shown_closed(handle, description, status), None
        except RPCError as error:
            raise translate_rpc_error(error, purge_id) from None
        return status, description

    async def wait(self, purge_id: str) -> ReportT:
        """The final report; raises PurgeFailedError when the purge ended FAILED or CANCELLED."""
        return await result_of(self._client.get_workflow_handle(purge_id, result_type=self.report_type))

    async def pause(self, purge_id: str) -> Status:
        """A table purge stops its running chunks at their checkpoints; a namespace purge starts no
        more table purges and pauses the running ones. Nothing more until `resume`."""
        return await self._control(purge_id, PAUSE_UPDATE)

    async def resume(self, purge_id: str) -> Status:
        return await self._control(purge_id, RESUME_UPDATE)

    async def set_rate_budget(self, purge_id: str, requests_per_second: float | None) -> Status:
        """A new per-bucket delete-request budget (None = unlimited), in force within seconds; a
        namespace purge's is shared evenly by its window."""
        return await self._control(purge_id, RATE_BUDGET_UPDATE, rate_budget_change(requests_per_second))

    async def _control(self, purge_id: str, update: str, *arguments: Any) -> Status:
        handle = self._client.get_workflow_handle(purge_id)
        return await run_update(handle, update, arguments, self.status_type)
