"""How a purge's steps end, as the workflow reads them: a failure's reason and type, a
cancelled chunk, a control refused, a refusal of the workflow's own. Deterministic helpers."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TypeVar

from temporalio.exceptions import ActivityError, ApplicationError, CancelledError, FailureError

from icepurge.contract.controls import ControlRejectedError
from icepurge.contract.names import ERROR_CONTROL_REJECTED, ERROR_MEMO
from icepurge.contract.reasons import shortened, typed_reason

StepResult = TypeVar("StepResult")
StatusT = TypeVar("StatusT")


class PurgeRefusedError(Exception):
    """A check of the workflow's own (not an activity's failure) that ends the purge FAILED."""

    def __init__(self, reason: str, error_type: str) -> None:
        super().__init__(reason)
        self.reason = reason
        self.error_type = error_type


def control_guard(check: Callable[[StatusT], None], status: StatusT) -> None:
    try:
        check(status)
    except ControlRejectedError as error:
        raise ApplicationError(str(error), type=ERROR_CONTROL_REJECTED, non_retryable=True) from None


async def cancel_all(steps: list[asyncio.Task[StepResult]]) -> list[StepResult | BaseException]:
    """Waiting on steps doesn't cancel them: without this a cancelled purge would close while
    its chunk activities (or table purges), never told, went on deleting."""
    for step in steps:
        step.cancel()
    return await asyncio.gather(*steps, return_exceptions=True)


def was_cancelled(outcome: BaseException) -> bool:
    if isinstance(outcome, asyncio.CancelledError):
        return True
    return isinstance(outcome, ActivityError) and isinstance(outcome.cause, CancelledError)


def failure_reason(error: FailureError) -> str:
    cause = error.cause
    return str(cause) if cause is not None else str(error)


def failure_type(error: FailureError) -> str | None:
    cause = error.cause
    return cause.type if isinstance(cause, ApplicationError) else None


def error_memo(reason: str, error_type: str | None) -> dict[str, str]:
    """The memo listings read a closed purge's reason from."""
    return {ERROR_MEMO: shortened(typed_reason(reason, error_type))}
