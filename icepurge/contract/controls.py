"""Operator controls of a running purge (workflow updates) and the checks that guard them.

A check that fails rejects the update before it reaches history; the message says why."""

from __future__ import annotations

from enum import StrEnum

from pydantic import Field, ValidationError

from icepurge.contract.states import TERMINAL_STATES, PurgeState
from icepurge.contract.status import PurgeStatus
from icepurge.contract.strict_model import FrozenModel
from icepurge.contract.validation import InvalidPurgeRequestError

PAUSABLE_STATES = frozenset({PurgeState.PENDING, PurgeState.PLANNING, PurgeState.DELETING})
# A budget set before the deletes begin is the one they start with.
BUDGET_STATES = PAUSABLE_STATES | {
    PurgeState.PAUSED,
    PurgeState.LOADING,
    PurgeState.DROPPING,
    PurgeState.SCHEDULED,
}


class ControlRejectedError(ValueError):
    """The purge can't take this control now; the message says why."""


class RateBudgetChange(FrozenModel):
    bucket_requests_per_second: float | None = Field(
        description="New per-bucket delete-request budget; null = as fast as the store answers.",
        gt=0,
        le=100_000,
    )


def rate_budget_change(requests_per_second: float | None) -> RateBudgetChange:
    """Raises InvalidPurgeRequestError naming the field, as every client does for bad input."""
    try:
        return RateBudgetChange(bucket_requests_per_second=requests_per_second)
    except ValidationError as error:
        reason = error.errors()[0]["msg"]
        raise InvalidPurgeRequestError(f"bucket_requests_per_second: {reason}") from None


def check_pause(status: PurgeStatus) -> None:
    if status.paused:
        raise ControlRejectedError(f"purge {status.purge_id} is already paused")
    if status.state not in PAUSABLE_STATES:
        scheduled = status.state is PurgeState.SCHEDULED
        raise ControlRejectedError(
            f"purge {status.purge_id} is {status.state}: only a purge still planning or deleting can pause"
            + (" (a scheduled one waits already: expedite, undrop or cancel it)" if scheduled else "")
        )


def check_resume(status: PurgeStatus) -> None:
    if not status.paused:
        raise ControlRejectedError(f"purge {status.purge_id} is not paused")


def check_rate_budget(status: PurgeStatus) -> None:
    if status.state not in BUDGET_STATES:
        raise ControlRejectedError(
            f"purge {status.purge_id} is {status.state}: its deletes are over, no budget to change"
        )


def check_scheduled(status: PurgeStatus, control: str, *, window_over: bool) -> None:
    """Undrop and expedite act on a soft-deleted purge while it waits, and only then."""
    if status.state is not PurgeState.SCHEDULED or window_over:
        state = "at the end of its window" if status.state is PurgeState.SCHEDULED else status.state
        raise ControlRejectedError(
            f"purge {status.purge_id} is {state}: only a SCHEDULED purge, before its deletes begin, "
            f"can {control}"
        )


def check_undrop(status: PurgeStatus, *, window_over: bool) -> None:
    check_scheduled(status, "undrop", window_over=window_over)
    if status.storage_deleted_by_catalog:
        raise ControlRejectedError(
            f"catalog {status.catalog!r} deleted the table's files when icepurge dropped it: there is "
            f"nothing left to register again; expedite or cancel purge {status.purge_id}"
        )


class TableControl(FrozenModel):
    """A namespace purge's pause, resume and budget share, signalled to each table purge it runs."""

    paused: bool
    bucket_requests_per_second: float | None = Field(None, gt=0, le=100_000)


class DropConfirmation(FrozenModel):
    """The caller of a purge that awaits its drop (options.await_drop_seconds: the front door,
    dropping with its own caller's credentials) dropped the table."""

    storage_gone: bool = Field(False, description="The catalog deleted the table's storage with the drop.")


class Stage(StrEnum):
    """A point in a table purge a caller can wait for (AWAIT_STAGE_UPDATE): `planned`, its plan is
    recorded; `dropped`, its table left the catalog. Either way a purge that closed first answers."""

    PLANNED = "planned"
    DROPPED = "dropped"


class StageWait(FrozenModel):
    stage: Stage


def reached(status: PurgeStatus, stage: Stage) -> bool:
    if status.state in TERMINAL_STATES:
        return True
    if stage is Stage.DROPPED:
        return status.dropped_at is not None
    # Set by the plan, and only by it.
    return status.gc_enabled is not None
