"""Temporal's answers as icepurge's errors: an RPC error, a closed workflow's result."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypeVar

from temporalio.client import WorkflowFailureError, WorkflowHandle, WorkflowUpdateFailedError
from temporalio.exceptions import ApplicationError, CancelledError
from temporalio.service import RPCError, RPCStatusCode

from icepurge.api.clients.errors import (
    PurgeControlRejectedError,
    PurgeFailedError,
    PurgeNotFoundError,
    PurgeServiceUnavailableError,
)

ResultT = TypeVar("ResultT")
_UNAVAILABLE = {RPCStatusCode.UNAVAILABLE, RPCStatusCode.DEADLINE_EXCEEDED}
# What the server answers an update on a run that closed, or that closed after admitting it (its
# status may read SUCCEEDED while it delivers its final event): the purge exists, and has finished.
_CLOSED_RUN = ("already completed", "aborted by closing workflow")


def translate_rpc_error(error: RPCError, purge_id: str | None = None) -> Exception:
    if error.status == RPCStatusCode.NOT_FOUND and purge_id is not None:
        return PurgeNotFoundError(f"no purge with id {purge_id}")
    if error.status in _UNAVAILABLE:
        return PurgeServiceUnavailableError(f"Temporal is unavailable ({error.status.name}); retry shortly")
    if error.status == RPCStatusCode.CANCELLED:
        # The client's own deadline: a query waits for a worker to answer it.
        return PurgeServiceUnavailableError(
            f"Temporal did not answer in time ({error.message}): the purge's workers may be busy or "
            "down (`icepurge doctor` checks them); retry shortly"
        )
    return error


async def result_of(handle: WorkflowHandle[Any, ResultT]) -> ResultT:
    """A closed workflow's result; PurgeFailedError when it ended FAILED or CANCELLED."""
    try:
        return await handle.result()
    except WorkflowFailureError as error:
        cause = error.cause
        if isinstance(cause, CancelledError):
            raise PurgeFailedError(handle.id, "CANCELLED", "cancelled", None) from error
        error_type = cause.type if isinstance(cause, ApplicationError) else None
        message = cause.message if isinstance(cause, ApplicationError) else str(cause or error)
        raise PurgeFailedError(handle.id, "FAILED", message, error_type) from error
    except RPCError as error:
        raise translate_rpc_error(error, handle.id) from None


async def run_update(
    handle: WorkflowHandle[Any, Any], update: str, arguments: Sequence[Any], result_type: type[ResultT]
) -> ResultT:
    """A control (workflow update); PurgeControlRejectedError with the workflow's reason when
    it refuses, or when the workflow has finished."""
    try:
        result: ResultT = await handle.execute_update(update, args=arguments, result_type=result_type)
    except WorkflowUpdateFailedError as error:
        cause = error.cause
        message = cause.message if isinstance(cause, ApplicationError) else str(cause or error)
        raise PurgeControlRejectedError(message) from None
    except RPCError as error:
        if error.status == RPCStatusCode.NOT_FOUND and any(said in error.message for said in _CLOSED_RUN):
            raise PurgeControlRejectedError(f"purge {handle.id} has already finished") from None
        raise translate_rpc_error(error, handle.id) from None
    return result
