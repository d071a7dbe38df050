"""An extra in-process worker with its own settings (queue, engine, bounds) for one module."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from temporalio.client import Client

from icepurge.api.clients.temporal_client import PurgeClient
from icepurge.worker.run import activity_pool, build_worker
from icepurge.worker.settings import WorkerSettings


@asynccontextmanager
async def in_process_worker(
    client: Client, settings: WorkerSettings, **updates: Any
) -> AsyncIterator[PurgeClient]:
    chosen = settings.model_copy(update=updates)
    with activity_pool(chosen) as pool:
        async with build_worker(client, chosen, pool):
            yield PurgeClient(client, chosen.task_queue)
