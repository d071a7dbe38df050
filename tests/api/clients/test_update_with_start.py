"""A drop's start and its wait go in one call (update-with-start) where the Temporal server takes
it. A server that refuses it (ExecuteMultiOperation off, as it is by default on some server
versions: PERMISSION_DENIED) still gets the purge started, once, and the caller waits for it the
two-call way. The refusal is injected on the client's way out, as that server answers."""

from __future__ import annotations

from typing import Any

from temporalio.client import (
    Client,
    Interceptor,
    OutboundInterceptor,
    StartWorkflowUpdateWithStartInput,
    WorkflowExecutionStatus,
)
from temporalio.service import RPCError, RPCStatusCode

from icepurge.api.clients.temporal_client import PurgeClient
from icepurge.contract.controls import Stage

# No worker polls it: a purge started there waits, and shows how often it was started.
QUEUE = "icepurge-no-update-with-start"


class _Refusing(OutboundInterceptor):
    async def start_update_with_start_workflow(self, input: StartWorkflowUpdateWithStartInput) -> Any:
        raise RPCError(
            "ExecuteMultiOperation API is disabled on this namespace.", RPCStatusCode.PERMISSION_DENIED, b""
        )


class _RefuseUpdateWithStart(Interceptor):
    def intercept_client(self, next: OutboundInterceptor) -> OutboundInterceptor:
        return _Refusing(next)


async def test_a_server_refusing_update_with_start_still_gets_the_purge_started_once(
    temporal_client: Client,
) -> None:
    config = temporal_client.config()
    config["interceptors"] = [_RefuseUpdateWithStart()]
    purges = PurgeClient(Client(**config), QUEUE)
    purge_id, status = await purges.purge_by_name_until(
        "lake", ["refused"], "orders", Stage.DROPPED, 5.0, requested_by="pytest"
    )
    assert status is None
    handle = temporal_client.get_workflow_handle(purge_id)
    try:
        started = await handle.describe()
        assert started.status is WorkflowExecutionStatus.RUNNING
        again, _ = await purges.purge_by_name_until(
            "lake", ["refused"], "orders", Stage.DROPPED, 1.0, requested_by="pytest"
        )
        # The retried drop attached to the running purge: no second run.
        assert again == purge_id
        assert (await handle.describe()).run_id == started.run_id
    finally:
        await handle.terminate("test over")
