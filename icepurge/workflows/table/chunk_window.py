"""The sliding window of a purge's chunk activities: which run, which a pause or a budget change
stopped (to run again before any new one), and which chunk comes next."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import Any

from icepurge.contract.request import Engine
from icepurge.contract.steps import ChunkResult
from icepurge.workflows.shared.step_outcomes import cancel_all, was_cancelled

RunChunk = Callable[[int], Coroutine[Any, Any, ChunkResult]]


@dataclass(frozen=True)
class ChunkTarget:
    """Where a purge's chunk objects are and which engine runs them; how many there are is
    unknown while planning still hands them out."""

    plan_location: str
    engine: Engine
    chunk_count: int | None


class ChunkWindow:
    def __init__(
        self, run: RunChunk, started: Callable[[int], None], done: Callable[[ChunkResult], None]
    ) -> None:
        self._run = run
        self._started = started
        self._done = done
        self._in_flight: dict[asyncio.Task[ChunkResult], int] = {}
        self._stopped: list[int] = []
        self.next_chunk = 0

    @property
    def running(self) -> int:
        return len(self._in_flight)

    def fill(self, width: int, ready: int) -> None:
        """Starts chunks until `width` run: stopped ones first, then new ones below `ready`."""
        while len(self._in_flight) < width and (self._stopped or self.next_chunk < ready):
            index = self._stopped.pop(0) if self._stopped else self.next_chunk
            self.next_chunk = max(self.next_chunk, index + 1)
            self._started(index)
            self._in_flight[asyncio.ensure_future(self._run(index))] = index

    def unfinished(self, chunk_count: int) -> int:
        """Chunks not finished yet: not started, stopped, running, or done but not yet collected
        (so never fewer than could be deleting)."""
        return chunk_count - (self.next_chunk - len(self._in_flight) - len(self._stopped))

    @property
    def stopped(self) -> bool:
        return bool(self._stopped)

    def any_done(self) -> bool:
        return any(task.done() for task in self._in_flight)

    def collect(self) -> None:
        """Settles the chunks that finished; a failed one raises its error."""
        for task in [task for task in self._in_flight if task.done()]:
            del self._in_flight[task]
            self._done(task.result())

    async def stop(self) -> None:
        """Cancels the running chunks; those that stop before finishing run again later."""
        tasks = list(self._in_flight)
        outcomes = await cancel_all(tasks)
        stopped: list[int] = []
        for task, outcome in zip(tasks, outcomes, strict=True):
            index = self._in_flight.pop(task)
            if isinstance(outcome, ChunkResult):
                self._done(outcome)
            elif was_cancelled(outcome):
                stopped.append(index)
            else:
                raise outcome
        self._stopped = sorted([*self._stopped, *stopped])

    async def abandon(self) -> None:
        """The purge ends: no chunk may go on deleting unseen."""
        await cancel_all(list(self._in_flight))
        self._in_flight.clear()
