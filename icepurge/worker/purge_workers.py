"""One worker process's pollers: the task queue, whose activity slots single-table purges keep,
and its bulk queue, where namespace and catalog purges run with slots of their own. Both
register every workflow and activity: which queue a purge runs on is where it was started."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from types import TracebackType

from temporalio.worker import Worker

from icepurge.contract.priorities import bulk_queue


class PurgeWorkers:
    def __init__(
        self, build: Callable[[str, int], Worker], task_queue: str, slots: int, bulk_slots: int
    ) -> None:
        self.main = build(task_queue, slots)
        self.bulk = build(bulk_queue(task_queue), bulk_slots)

    @property
    def all(self) -> tuple[Worker, Worker]:
        return self.main, self.bulk

    async def __aenter__(self) -> PurgeWorkers:
        await self.main.__aenter__()
        try:
            await self.bulk.__aenter__()
        except BaseException:
            await self.main.__aexit__(None, None, None)
            raise
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        # Both drain at once: a SIGTERM's grace period is the same for either queue's steps.
        await asyncio.gather(self.main.__aexit__(kind, error, trace), self.bulk.__aexit__(kind, error, trace))

    async def run(self) -> None:
        await asyncio.gather(self.main.run(), self.bulk.run())
