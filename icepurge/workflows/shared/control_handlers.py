"""Pause, resume and the rate budget: the updates both workflows take, defined once. Each
workflow says how its status is checked (a refusal names the state) and what a control does to
it (a table purge restarts its chunks from their checkpoints; a namespace purge passes the control
on to its running table purges)."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

from temporalio import workflow

from icepurge.contract.controls import RateBudgetChange
from icepurge.contract.names import PAUSE_UPDATE, RATE_BUDGET_UPDATE, RESUME_UPDATE
from icepurge.workflows.shared.step_outcomes import control_guard

StatusT = TypeVar("StatusT")


@dataclass(frozen=True)
class ControlChecks(Generic[StatusT]):
    """Each raises ControlRejectedError when the control can't apply in the status's state."""

    pause: Callable[[StatusT], None]
    resume: Callable[[StatusT], None]
    budget: Callable[[StatusT], None]


class ControlHandlers(ABC, Generic[StatusT]):
    @abstractmethod
    def _controlled_status(self) -> StatusT: ...

    @abstractmethod
    def _control_checks(self) -> ControlChecks[StatusT]: ...

    @abstractmethod
    async def _apply_pause(self, paused: bool) -> None: ...

    @abstractmethod
    async def _apply_budget(self, requests_per_second: float | None) -> None: ...

    @workflow.update(name=PAUSE_UPDATE)
    async def pause(self) -> StatusT:
        """Stops the running deletes at their checkpoints and starts no more until `resume`."""
        await self._apply_pause(True)
        return self._controlled_status()

    @pause.validator
    def _validate_pause(self) -> None:
        control_guard(self._control_checks().pause, self._controlled_status())

    @workflow.update(name=RESUME_UPDATE)
    async def resume(self) -> StatusT:
        await self._apply_pause(False)
        return self._controlled_status()

    @resume.validator
    def _validate_resume(self) -> None:
        control_guard(self._control_checks().resume, self._controlled_status())

    @workflow.update(name=RATE_BUDGET_UPDATE)
    async def set_rate_budget(self, change: RateBudgetChange) -> StatusT:
        """A new per-bucket delete-request budget (None = unlimited), in force within seconds."""
        await self._apply_budget(change.bucket_requests_per_second)
        return self._controlled_status()

    @set_rate_budget.validator
    def _validate_rate_budget(self, change: RateBudgetChange) -> None:
        control_guard(self._control_checks().budget, self._controlled_status())
