"""What both front-door benchmarks run on: the embedded stack's REST catalog (one table bucket)
behind the API's front door (insecure dev mode), and a worker purging on this event loop."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass

from temporalio.client import Client

from bench.bench_stack import bench_worker_settings
from icepurge.api.clients.temporal_client import PurgeClient
from icepurge.api.server.front_door.policy import FrontDoorPolicy
from icepurge.api.server.settings import ApiSettings
from icepurge.connection.connect import connect
from icepurge.devstack.api_server import serve_api
from icepurge.devstack.catalog_env import pyiceberg_catalog_env
from icepurge.devstack.process import WORKER_READY
from icepurge.devstack.stack import EmbeddedStack
from icepurge.worker.run import activity_pool, build_worker

CATALOG = "tablebucket"
HOLD_NAMESPACE = "icepurge_held"


def door_policy(hold: bool) -> FrontDoorPolicy:
    """`hold`: the drop moves the table into HOLD_NAMESPACE and answers; plan and drop follow."""
    return FrontDoorPolicy(hold_namespace=HOLD_NAMESPACE if hold else None)


@dataclass(frozen=True)
class FrontDoor:
    api_url: str
    purges: PurgeClient
    client: Client

    @property
    def door_url(self) -> str:
        return f"{self.api_url}/iceberg/{CATALOG}"


def serve_catalog(stack: EmbeddedStack, bucket: str) -> None:
    """The table bucket, known to this process's API as CATALOG (PyIceberg's environment)."""
    stack.create_table_bucket(bucket)
    os.environ.update(pyiceberg_catalog_env(CATALOG, stack.rest_catalog_properties(bucket)))


@asynccontextmanager
async def front_door(
    stack: EmbeddedStack,
    queue: str,
    *,
    worker_process: bool = False,
    activity_slots: int = 8,
    workers: int = 1,
    policy: FrontDoorPolicy | None = None,
) -> AsyncIterator[FrontDoor]:
    """The API in a thread of this process; the worker on this event loop, or (`worker_process`)
    in `workers` processes of their own, as deployed: then the API's answers don't share the GIL
    with planning."""
    settings = bench_worker_settings(stack, queue, activity_slots)
    client = await connect(settings, warn_plaintext=False)
    api = ApiSettings(
        temporal_address=stack.temporal_address,
        codec_keys=stack.codec_keys,
        task_queue=queue,
        api_insecure_dev=True,
        front_door={CATALOG: policy or FrontDoorPolicy()},
    )
    with serve_api(api) as api_url:
        if worker_process:
            processes = [
                stack.worker_process(
                    f"bench-worker-{index}",
                    ICEPURGE_TASK_QUEUE=queue,
                    ICEPURGE_EVENT_SINKS="[]",
                    ICEPURGE_MAX_CONCURRENT_ACTIVITIES=str(activity_slots),
                )
                for index in range(workers)
            ]
            try:
                for worker in processes:
                    worker.start()
                for worker in processes:
                    worker.wait_for_log(WORKER_READY)
                yield FrontDoor(api_url, PurgeClient(client, queue), client)
            finally:
                for worker in processes:
                    worker.stop()
            return
        with activity_pool(settings) as pool:
            async with build_worker(client, settings, pool):
                yield FrontDoor(api_url, PurgeClient(client, queue), client)
