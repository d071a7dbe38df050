"""The SDK sends its service calls (the operator service's, a health check, a task queue's
description) without retries of its own. A long-lived client meets a connection closed under a
call now and then: gRPC CANCELLED "operation was canceled" (temporalio/sdk-core#807; the frontend
recycles connections past their maximum age). An idempotent call is sent once more, on a new
connection; any other error, or a second cut, is the caller's."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TypeVar

from temporalio.service import RPCError, RPCStatusCode

Value = TypeVar("Value")
CONNECTION_CUT = "operation was canceled"


def connection_cut(error: RPCError) -> bool:
    return error.status == RPCStatusCode.CANCELLED and CONNECTION_CUT in error.message


async def once_more_if_cut(call: Callable[[], Awaitable[Value]]) -> Value:
    try:
        return await call()
    except RPCError as error:
        if not connection_cut(error):
            raise
    return await call()
