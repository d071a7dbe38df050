"""A bulk purge's sliding window of work units (table purges, batches of small tables, ranges), so a
small unit never waits behind a giant one. One loop for the namespace purge's three windows.

Units are kept in the order they started, and settled and cancelled in that order: a set of tasks
iterates in the order of their memory addresses, which a replay on another worker does not share,
so the commands of two units ending (or cancelled) in one activation could come in another order.
Deterministic: no I/O, every side effect is the caller's activity or child.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, Generic, TypeVar

from temporalio import workflow

from icepurge.workflows.shared.step_outcomes import cancel_all

UnitResult = TypeVar("UnitResult")


class UnitWindow(Generic[UnitResult]):
    """The units in flight, at most `width` of them, or with `weighed`, at most `width` of their
    weights (a batch counted as its tables)."""

    def __init__(self, width: int, weighed: bool = False) -> None:
        self._width = width
        self._weighed = weighed
        self._in_flight: dict[asyncio.Task[UnitResult], int] = {}

    def room(self) -> bool:
        taken = sum(self._in_flight.values()) if self._weighed else len(self._in_flight)
        return taken < self._width

    def start(self, work: Coroutine[Any, Any, UnitResult], weight: int = 1) -> None:
        self._in_flight[asyncio.ensure_future(work)] = weight

    async def run(
        self,
        *,
        more: Callable[[], bool],
        paused: Callable[[], bool],
        start_next: Callable[[], Awaitable[None]],
        settle: Callable[[UnitResult], Awaitable[None]],
        round_ended: Callable[[], Awaitable[None]],
    ) -> None:
        """Starts units while there is room and `more` to start, unpaused, and settles each that
        ends, until none runs and none may start: the work is done, or the run should continue as
        new (the window drains first, so no child outlives the run that awaits it), or, paused
        with none running, the caller's to decide. Cancelled, it cancels every unit first."""
        try:
            while True:
                suggested = workflow.info().is_continue_as_new_suggested()
                while self.room() and more() and not suggested and not paused():
                    await start_next()
                could_start = more() and not suggested
                if not self._in_flight and (not could_start or not paused()):
                    return

                def ready(could_start: bool = could_start) -> bool:
                    return any(task.done() for task in self._in_flight) or (
                        could_start and self.room() and not paused()
                    )

                await workflow.wait_condition(ready)
                for task in [task for task in self._in_flight if task.done()]:
                    del self._in_flight[task]
                    await settle(task.result())
                await round_ended()
        except asyncio.CancelledError:
            await cancel_all(list(self._in_flight))
            raise
