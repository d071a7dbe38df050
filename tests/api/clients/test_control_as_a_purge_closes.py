"""A control sent as a purge closes: its status already reads SUCCEEDED while its workflow delivers
the final event, and the server aborts an update it admitted then (NOT_FOUND "workflow update was
aborted by closing workflow", Temporal's update.AbortedByWorkflowClosingErr). It read as "no purge
with id", a 404 for a purge that exists. Seen as a flake of
test_expedite_purges_at_once_through_the_http_api under load; the abort is injected here on purpose."""

from __future__ import annotations

from typing import Any, cast

import pytest
from temporalio.client import WorkflowHandle
from temporalio.service import RPCError, RPCStatusCode

from icepurge.api.clients.errors import PurgeControlRejectedError, PurgeNotFoundError
from icepurge.api.clients.temporal_results import run_update
from icepurge.contract.names import PAUSE_UPDATE
from icepurge.contract.status import PurgeStatus


class _AnsweringHandle:
    id = "icepurge-logic.t-closing"

    def __init__(self, message: str) -> None:
        self.message = message

    async def execute_update(self, *_: Any, **__: Any) -> Any:
        raise RPCError(self.message, RPCStatusCode.NOT_FOUND, b"")


async def _paused(message: str) -> PurgeStatus:
    return await run_update(
        cast(WorkflowHandle[Any, Any], _AnsweringHandle(message)), PAUSE_UPDATE, [], PurgeStatus
    )


@pytest.mark.parametrize(
    "message",
    ["workflow execution already completed", "workflow update was aborted by closing workflow"],
    ids=["closed", "closing"],
)
async def test_a_control_on_a_purge_that_closed_or_is_closing_is_refused_as_finished(message: str) -> None:
    with pytest.raises(PurgeControlRejectedError, match="has already finished"):
        await _paused(message)


async def test_a_control_on_no_such_purge_is_not_found() -> None:
    with pytest.raises(PurgeNotFoundError, match="no purge with id"):
        await _paused("workflow execution not found")
