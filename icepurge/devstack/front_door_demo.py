"""`make run`'s front-door demo: a PyIceberg REST client pointed at icepurge instead of its
catalog (SeaweedFS's REST catalog) writes a table, then drops it with purge: the drop answers at
once, icepurge's purge deletes the files."""

from __future__ import annotations

import asyncio
import time

from pyiceberg.catalog.rest import RestCatalog

from icepurge.api.clients.http_client import HttpPurgeClient
from icepurge.api.server.front_door.drops import TableId
from icepurge.devstack.small_tables import create_demo_table
from icepurge.devstack.stack import EmbeddedStack

DOOR_CATALOG = "rest"
DOOR_BUCKET = "demo-tables"
DOOR_NAMESPACE = "demo"


def front_door_policies() -> str:
    """ICEPURGE_FRONT_DOOR for the demo's API: the REST catalog, default policy."""
    return '{"' + DOOR_CATALOG + '": {}}'


async def front_door_demo(stack: EmbeddedStack, api_url: str) -> None:
    door = RestCatalog(
        "door",
        uri=f"{api_url}/iceberg/{DOOR_CATALOG}",
        warehouse=f"s3://{DOOR_BUCKET}/",
        **stack.s3_properties,
    )
    name = f"orders_{int(time.time())}"
    await asyncio.to_thread(create_demo_table, door, (DOOR_NAMESPACE,), name)
    began = time.perf_counter()
    await asyncio.to_thread(door.purge_table, (DOOR_NAMESPACE, name))
    answered = time.perf_counter() - began
    purge_id = TableId(DOOR_CATALOG, [DOOR_NAMESPACE], name).purge_id()
    async with HttpPurgeClient(api_url) as client:
        report = await client.wait(purge_id)
    print(
        f"front door: PyIceberg's RestCatalog at {api_url}/iceberg/{DOOR_CATALOG} dropped"
        f" {DOOR_NAMESPACE}.{name} with purge in {answered * 1000:.0f} ms; purge {purge_id}"
        f" {report.status.state.value}"
    )
