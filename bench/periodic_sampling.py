"""A sample taken at the start of a block, every SAMPLE_SECONDS while it runs, and at its end:
what a benchmark reads from /proc about the processes it started (a process or thread that ends
between samples keeps its last one)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

SAMPLE_SECONDS = 0.5


@asynccontextmanager
async def sampled(sample: Callable[[], None]) -> AsyncIterator[None]:
    sample()

    async def keep_sampling() -> None:
        while True:
            await asyncio.sleep(SAMPLE_SECONDS)
            await asyncio.to_thread(sample)

    sampler = asyncio.create_task(keep_sampling())
    try:
        yield
    finally:
        sampler.cancel()
        sample()
