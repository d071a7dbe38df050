"""The start-workflow client for catalogs written in Python."""

from __future__ import annotations

from typing import Any

from temporalio.client import Client, WorkflowHandle
from temporalio.common import WorkflowIDConflictPolicy, WorkflowIDReusePolicy
from temporalio.service import RPCError

from workflows.constants import STATUS_QUERY, TASK_QUEUE, WORKFLOW_TYPE
from workflows.purge_id import purge_id_for
from workflows.request import PurgeRequest
from workflows.status import PurgeReport, PurgeStatus
from workflows.validation import parse_request


class PurgeNotFoundError(LookupError):
    """No purge has this id; check the id printed when the purge was started."""


class PurgeClient:
    def __init__(self, client: Client, task_queue: str = TASK_QUEUE) -> None:
        self._client = client
        self._task_queue = task_queue

    async def start(self, request: PurgeRequest | dict[str, Any]) -> str:
        """Starts a purge, or attaches to the one already running for the same table snapshot.

        Raises InvalidPurgeRequestError (naming the fields) before anything reaches Temporal.
        """
        parsed = parse_request(request)
        handle: WorkflowHandle[Any, Any] = await self._client.start_workflow(
            WORKFLOW_TYPE,
            parsed.model_dump(mode="json"),
            id=purge_id_for(parsed),
            task_queue=self._task_queue,
            id_conflict_policy=WorkflowIDConflictPolicy.USE_EXISTING,
            id_reuse_policy=WorkflowIDReusePolicy.ALLOW_DUPLICATE,
            static_summary=f"purge {parsed.table_name}",
        )
        return handle.id

    async def status(self, purge_id: str) -> PurgeStatus:
        handle = self._client.get_workflow_handle(purge_id)
        try:
            status: PurgeStatus = await handle.query(STATUS_QUERY, result_type=PurgeStatus)
        except RPCError as error:
            if "not found" in str(error).lower():
                raise PurgeNotFoundError(f"no purge with id {purge_id}") from None
            raise
        return status

    async def wait(self, purge_id: str) -> PurgeReport:
        """The final report; raises WorkflowFailureError when the purge ended FAILED."""
        handle = self._client.get_workflow_handle(purge_id, result_type=PurgeReport)
        report: PurgeReport = await handle.result()
        return report
