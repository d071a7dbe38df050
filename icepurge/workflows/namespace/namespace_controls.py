"""The checks that guard a namespace purge's pause, resume and budget updates."""

from __future__ import annotations

from icepurge.contract.controls import ControlRejectedError
from icepurge.contract.namespace_status import (
    NAMESPACE_TERMINAL_STATES,
    NamespacePurgeState,
    NamespacePurgeStatus,
)

_PAUSABLE = frozenset(
    {NamespacePurgeState.PENDING, NamespacePurgeState.ENUMERATING, NamespacePurgeState.PURGING}
)


def check_namespace_pause(status: NamespacePurgeStatus) -> None:
    if status.paused:
        raise ControlRejectedError(f"namespace purge {status.purge_id} is already paused")
    if status.state not in _PAUSABLE:
        raise ControlRejectedError(
            f"namespace purge {status.purge_id} is {status.state}: only one still enumerating or purging "
            "tables can pause"
        )


def check_namespace_resume(status: NamespacePurgeStatus) -> None:
    if not status.paused:
        raise ControlRejectedError(f"namespace purge {status.purge_id} is not paused")


def check_namespace_budget(status: NamespacePurgeStatus) -> None:
    if status.state in NAMESPACE_TERMINAL_STATES or status.state is NamespacePurgeState.DROPPING_NAMESPACES:
        raise ControlRejectedError(
            f"namespace purge {status.purge_id} is {status.state}: its deletes are over, no budget to change"
        )


def budget_share(budget: float | None, window: int) -> float | None:
    """Each table purge of the window gets an even share: together they never exceed the budget."""
    return None if budget is None else budget / window
