"""The soft-delete window of a purge: it waits SCHEDULED until its time, unless an operator
expedites it (deletes begin now) or undrops it (nothing is deleted, the table comes back).

Deterministic: only workflow timers and conditions."""

from __future__ import annotations

from contextlib import suppress
from datetime import datetime

from temporalio import workflow

from icepurge.contract.controls import check_scheduled, check_undrop
from icepurge.contract.status import PurgeStatus


class SoftDeleteWindow:
    def __init__(self) -> None:
        self.expedited = False
        self.undropped = False
        # An undrop re-registering the table: the window can't close under it.
        self.undropping = False
        self.over = False

    def check_expedite(self, status: PurgeStatus) -> None:
        """While the window is open and no undrop is under way."""
        check_scheduled(status, "expedite", window_over=self.over or self.undropping)

    def check_undrop(self, status: PurgeStatus) -> None:
        check_undrop(status, window_over=self.over or self.undropping)

    async def wait_until(self, due: datetime) -> bool:
        """True when the deletes may begin (the time came, or expedited); False once undropped."""
        while not self.undropped and not self.expedited and workflow.now() < due:
            with suppress(TimeoutError):
                await workflow.wait_condition(
                    lambda: self.expedited or self.undropped or self.undropping,
                    timeout=due - workflow.now(),
                )
            # An undrop in flight decides; one refused (identifier taken) leaves the window open.
            await workflow.wait_condition(lambda: not self.undropping)
        self.over = not self.undropped
        return self.over
