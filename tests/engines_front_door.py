"""The engines tier's front door: a Java REST catalog server (Apache Iceberg's own, JDBC on SQLite,
files kept on a plain drop; or Nessie, files always kept), its tables on the stack's S3, as the
upstream of an API of the tier's own, which serves it as several catalogs, one per front-door
policy, with a worker of its own that knows each by name (a worker reads its catalogs once, as it
starts)."""

from __future__ import annotations

import asyncio
import os
import time
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import httpx
from pyiceberg.catalog.rest import RestCatalog
from temporalio.client import Client

from icepurge.api.clients.listing import PurgeFilter
from icepurge.api.clients.temporal_client import PurgeClient
from icepurge.api.server.front_door.policy import FrontDoorAuth, FrontDoorPolicy
from icepurge.api.server.settings import ApiSettings
from icepurge.contract.states import PurgeState
from icepurge.contract.status import PurgeStatus
from icepurge.devstack.api_server import serve_api
from icepurge.devstack.catalog_env import pyiceberg_catalog_env
from icepurge.devstack.free_ports import free_ports
from icepurge.devstack.iceberg_rest_server import IcebergRestServer
from icepurge.devstack.seaweed import create_buckets
from icepurge.devstack.stack import EmbeddedStack
from icepurge.worker.run import activity_pool, build_worker
from icepurge.worker.settings import WorkerSettings
from tests.api_server import TOKENS
from tests.purge_helpers import assert_counts_add_up
from tests.store import S3Store
from tests.tables import simple_table

REFERENCE_BUCKET = "iceberg-reference"
# The reference server served as catalogs of these names, each with its policy.
KEEPS = "reference"  # upstream_keeps_storage: drop first, plan after
PLANS_FIRST = "referenceplanfirst"  # the default: plan, then drop
UNSAID = "referenceunsaid"  # upstream_keeps_storage and purge_unspecified_drops
PASSING = "referencepass"  # pass_through, upstream_keeps_storage
POLICIES = {
    KEEPS: FrontDoorPolicy(upstream_keeps_storage=True),
    PLANS_FIRST: FrontDoorPolicy(),
    UNSAID: FrontDoorPolicy(upstream_keeps_storage=True, purge_unspecified_drops=True),
    PASSING: FrontDoorPolicy(auth=FrontDoorAuth.PASS_THROUGH, upstream_keeps_storage=True),
}
ADMIN_TOKEN = TOKENS["admin"][0]
QUEUE = "icepurge-engines"


class UpstreamServer(Protocol):
    @property
    def uri(self) -> str: ...

    def start(self) -> None: ...

    def stop(self) -> None: ...


@dataclass(frozen=True)
class ReferenceFrontDoor:
    upstream_uri: str
    api_url: str
    s3_properties: dict[str, str]
    purges: PurgeClient
    # The path prefix the upstream's config names (Nessie's is its branch), as clients send it.
    prefix: str = ""

    def door_uri(self, catalog: str) -> str:
        return f"{self.api_url}/iceberg/{catalog}"

    def door(self, catalog: str) -> RestCatalog:
        """A PyIceberg client of the front door's `catalog`."""
        return RestCatalog(
            f"client-{catalog}", uri=self.door_uri(catalog), token=ADMIN_TOKEN, **self.s3_properties
        )

    def upstream(self) -> RestCatalog:
        """The reference server called directly."""
        return RestCatalog("reference-direct", uri=self.upstream_uri, **self.s3_properties)

    def drop(self, catalog: str, namespace: str, table: str, *, purge: bool) -> httpx.Response:
        """A table DELETE as a REST client sends it, saying purgeRequested."""
        return httpx.delete(
            f"{self.door_uri(catalog)}/v1/{self.prefix}{'/' if self.prefix else ''}"
            f"namespaces/{namespace}/tables/{table}",
            params={"purgeRequested": str(purge).lower()},
            headers={"Authorization": f"Bearer {ADMIN_TOKEN}"},
            timeout=120,
        )


@asynccontextmanager
async def reference_front_door(
    stack: EmbeddedStack,
    client: Client,
    worker_settings: WorkerSettings,
    api_settings: ApiSettings,
    state_dir: Path,
) -> AsyncIterator[ReferenceFrontDoor]:
    create_buckets(stack.s3_properties, [REFERENCE_BUCKET])
    server = IcebergRestServer(
        state_dir, free_ports(1)[0], f"s3://{REFERENCE_BUCKET}/warehouse", stack.s3_properties
    )
    serving = upstream_front_door(server, POLICIES, QUEUE, stack, client, worker_settings, api_settings)
    async with serving as door:
        yield door


@asynccontextmanager
async def upstream_front_door(
    server: UpstreamServer,
    policies: dict[str, FrontDoorPolicy],
    queue: str,
    stack: EmbeddedStack,
    client: Client,
    worker_settings: WorkerSettings,
    api_settings: ApiSettings,
    prefix: str = "",
) -> AsyncIterator[ReferenceFrontDoor]:
    """`server` started, served as `policies`' catalogs by an API and a worker on `queue`."""
    server.start()
    try:
        for name in policies:
            os.environ.update(
                pyiceberg_catalog_env(name, {"type": "rest", "uri": server.uri, **stack.s3_properties})
            )
        # The service's own chunk size, not the other tiers' tiny one: the tier purges 50,000 files.
        chunking = WorkerSettings.model_fields["chunk_target_files"].default
        settings = worker_settings.model_copy(update={"task_queue": queue, "chunk_target_files": chunking})
        with (
            activity_pool(settings) as pool,
            serve_api(
                api_settings.model_copy(update={"front_door": policies, "task_queue": queue})
            ) as api_url,
        ):
            async with build_worker(client, settings, pool):
                purges = PurgeClient(client, queue)
                yield ReferenceFrontDoor(server.uri, api_url, stack.s3_properties, purges, prefix)
    finally:
        server.stop()


async def purges_of(purges: PurgeClient, catalog: str, namespace: str, table: str) -> list[str]:
    page = await purges.list(PurgeFilter(catalog=catalog, namespace=[namespace], table=table), page_size=10)
    return [item.purge_id for item in page.items]


async def purge_of(purges: PurgeClient, catalog: str, namespace: str, table: str, seconds: float = 30) -> str:
    """The one purge of that table (listings are eventually consistent)."""
    deadline = time.monotonic() + seconds
    while not (ids := await purges_of(purges, catalog, namespace, table)) and time.monotonic() < deadline:
        await asyncio.sleep(0.5)
    assert len(ids) == 1, f"purges of {catalog}.{namespace}.{table}: {ids}"
    return ids[0]


async def purged_through_the_door(
    reference: ReferenceFrontDoor, purges: PurgeClient, s3: S3Store, namespace: str, catalog: str
) -> tuple[str, PurgeStatus, int]:
    """A PyIceberg client's purge_table of a new table through the front door's `catalog`: the
    purge's id and status once it closed SUCCEEDED with nothing left, and the objects it had."""
    name = f"d{uuid.uuid4().hex[:8]}"
    door = reference.door(catalog)
    table = simple_table(door, (namespace,), name, appends=3)
    files = len(s3.list(table.location()))
    await asyncio.to_thread(door.purge_table, (namespace, name))
    assert not reference.upstream().table_exists((namespace, name))
    purge_id = await purge_of(purges, catalog, namespace, name)
    status = (await purges.wait(purge_id)).status
    assert status.state is PurgeState.SUCCEEDED, status
    assert_counts_add_up(status)
    assert status.counts.total().deleted == status.planned.files == files, (status, files)
    assert s3.list(table.location()) == set()
    return purge_id, status, files
