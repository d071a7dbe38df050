"""Project Nessie as the front door's upstream: its Iceberg REST catalog (prefix `main`, a `uri`
override pointing at itself, S3 request signing offered to clients) never deletes a table's
files, with or without purgeRequested, so `upstream_keeps_storage` is the policy for it.

Two things differ from other catalogs, and the purge follows Iceberg's own rules on both: a table
Nessie creates says `gc.enabled=false` (other branches may share its files), so its data and
delete files are skipped unless the table says otherwise; and the metadata Nessie serves holds
the current snapshot alone, with no metadata log (history is Nessie's commit log), so earlier
snapshots' manifest lists and earlier metadata files are reached by no purge (nessie-gc's work)."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass

import httpx
import pytest
from pyiceberg.table import Table
from temporalio.client import Client

from icepurge.api.server.front_door.policy import FrontDoorPolicy
from icepurge.api.server.front_door.routes import PURGE_ID_HEADER
from icepurge.api.server.settings import ApiSettings
from icepurge.contract.counts import SkipReason
from icepurge.contract.names import DROP_TABLE_ACTIVITY, LOAD_TABLE_ACTIVITY, PLAN_ACTIVITY
from icepurge.contract.states import PurgeState
from icepurge.contract.status import PurgeStatus
from icepurge.devstack.free_ports import free_ports
from icepurge.devstack.nessie_server import NessieServer
from icepurge.devstack.seaweed import create_buckets
from icepurge.devstack.stack import EmbeddedStack
from icepurge.devstack.synthetic_table import TableShape, synthetic_table
from icepurge.worker.settings import WorkerSettings
from tests.engines_front_door import ReferenceFrontDoor, purge_of, purges_of, upstream_front_door
from tests.purge_helpers import activities_in_order, assert_counts_add_up
from tests.store import S3Store
from tests.tables import simple_table

pytestmark = pytest.mark.engines
NAMESPACE = "engines"
BUCKET = "nessie-lake"
KEEPS = "nessie"
BRANCH = "main"  # the prefix Nessie's config hands clients
PLANS_FIRST = "nessieplanfirst"
POLICIES = {KEEPS: FrontDoorPolicy(upstream_keeps_storage=True), PLANS_FIRST: FrontDoorPolicy()}


@dataclass(frozen=True)
class Reach:
    """What a purge of the table's current metadata reaches, as object URIs."""

    metadata: set[str]  # the current metadata file, its manifest list and manifests
    content: set[str]  # data and delete files
    gc_enabled: bool


def reach_of(table: Table) -> Reach:
    snapshot = table.current_snapshot()
    assert snapshot is not None
    manifests = snapshot.manifests(table.io)
    content = {
        entry.data_file.file_path
        for manifest in manifests
        for entry in manifest.fetch_manifest_entry(table.io)
    }
    metadata = {
        table.metadata_location,
        snapshot.manifest_list,
        *(manifest.manifest_path for manifest in manifests),
    }
    gc_enabled = table.properties.get("gc.enabled", "true") == "true"
    return Reach(metadata, content, gc_enabled)


def assert_purged_as_iceberg_would(
    status: PurgeStatus, reach: Reach, before: set[str], after: set[str]
) -> None:
    """Everything the current metadata reaches is gone (content only under gc.enabled), counted
    once; what stays is what only Nessie's history names."""
    assert status.state is PurgeState.SUCCEEDED, status
    assert_counts_add_up(status)
    kept_content = set() if reach.gc_enabled else reach.content
    assert after == before - reach.metadata - reach.content | kept_content
    assert status.counts.total().deleted == len(reach.metadata) + (
        len(reach.content) if reach.gc_enabled else 0
    )
    skipped = sum(
        counts.skipped.get(SkipReason.GC_DISABLED, 0) for counts in status.counts.by_category.values()
    )
    assert skipped == len(kept_content)
    history = before - reach.metadata - reach.content
    assert all(uri.endswith(".metadata.json") or "/metadata/snap-" in uri for uri in history), history


@pytest.fixture(scope="module")
async def nessie(
    stack: EmbeddedStack,
    temporal_client: Client,
    worker_settings: WorkerSettings,
    api_settings: ApiSettings,
    tmp_path_factory: pytest.TempPathFactory,
) -> AsyncIterator[ReferenceFrontDoor]:
    create_buckets(stack.s3_properties, [BUCKET])
    server = NessieServer(
        tmp_path_factory.mktemp("nessie"), free_ports(1)[0], f"s3://{BUCKET}/warehouse", stack.s3_properties
    )
    async with upstream_front_door(
        server,
        POLICIES,
        "icepurge-engines-nessie",
        stack,
        temporal_client,
        worker_settings,
        api_settings,
        prefix=BRANCH,
    ) as door:
        door.upstream().create_namespace_if_not_exists((NAMESPACE,))
        yield door


async def test_nessie_keeps_every_file_even_on_a_drop_with_purge(
    nessie: ReferenceFrontDoor, s3: S3Store
) -> None:
    """Called directly: why the front door must delete what Nessie's drop leaves."""
    name = f"n{uuid.uuid4().hex[:8]}"
    table = simple_table(nessie.upstream(), (NAMESPACE,), name, appends=2)
    files = s3.list(table.location())
    answer = await asyncio.to_thread(
        httpx.delete,
        f"{nessie.upstream_uri}/v1/{BRANCH}/namespaces/{NAMESPACE}/tables/{name}",
        params={"purgeRequested": "true"},
    )
    assert answer.status_code == 204, answer.text
    assert not nessie.upstream().table_exists((NAMESPACE, name))
    assert files and s3.list(table.location()) == files


@pytest.mark.parametrize("gc_enabled", [None, "true"])
async def test_a_drop_with_purge_through_the_door_purges_what_iceberg_would(
    nessie: ReferenceFrontDoor, s3: S3Store, temporal_client: Client, gc_enabled: str | None
) -> None:
    """Drop first (upstream_keeps_storage). A table left as Nessie makes it keeps its data files;
    one that says gc.enabled=true loses them too."""
    name = f"d{uuid.uuid4().hex[:8]}"
    door = nessie.door(KEEPS)
    properties = {"gc.enabled": gc_enabled} if gc_enabled else None
    simple_table(door, (NAMESPACE,), name, appends=3, properties=properties)
    table = nessie.upstream().load_table((NAMESPACE, name))
    assert table.properties["gc.enabled"] == (gc_enabled or "false")
    reach, before = reach_of(table), s3.list(table.location())
    await asyncio.to_thread(door.purge_table, (NAMESPACE, name))
    assert not nessie.upstream().table_exists((NAMESPACE, name))
    purge_id = await purge_of(nessie.purges, KEEPS, NAMESPACE, name)
    status = (await nessie.purges.wait(purge_id)).status
    assert_purged_as_iceberg_would(status, reach, before, s3.list(table.location()))
    assert not status.storage_deleted_by_catalog
    steps = {LOAD_TABLE_ACTIVITY, DROP_TABLE_ACTIVITY, PLAN_ACTIVITY}
    order = [step for step in await activities_in_order(temporal_client, purge_id) if step in steps]
    assert order == [LOAD_TABLE_ACTIVITY, DROP_TABLE_ACTIVITY, PLAN_ACTIVITY]


async def test_plan_first_on_nessie_purges_what_iceberg_would_too(
    nessie: ReferenceFrontDoor, s3: S3Store
) -> None:
    name = f"f{uuid.uuid4().hex[:8]}"
    door = nessie.door(PLANS_FIRST)
    table = simple_table(door, (NAMESPACE,), name, appends=2, properties={"gc.enabled": "true"})
    table = nessie.upstream().load_table((NAMESPACE, name))
    reach, before = reach_of(table), s3.list(table.location())
    await asyncio.to_thread(door.purge_table, (NAMESPACE, name))
    purge_id = await purge_of(nessie.purges, PLANS_FIRST, NAMESPACE, name)
    status = (await nessie.purges.wait(purge_id)).status
    assert_purged_as_iceberg_would(status, reach, before, s3.list(table.location()))


async def test_the_door_keeps_clients_on_itself_and_a_plain_drop_plain(
    nessie: ReferenceFrontDoor, s3: S3Store
) -> None:
    """Nessie's config overrides `uri` with its own address; the front door's answer points back
    at the door, so a client's later calls (this drop included) come through it."""
    door = nessie.door(KEEPS)
    assert door.properties["uri"].rstrip("/") == nessie.door_uri(KEEPS)
    name = f"p{uuid.uuid4().hex[:8]}"
    table = simple_table(door, (NAMESPACE,), name, appends=2)
    files = s3.list(table.location())
    await asyncio.to_thread(door.drop_table, (NAMESPACE, name))
    assert not nessie.upstream().table_exists((NAMESPACE, name))
    await asyncio.sleep(2)
    assert await purges_of(nessie.purges, KEEPS, NAMESPACE, name) == []
    assert s3.list(table.location()) == files


@pytest.mark.parametrize("files", [10, 50_000])
async def test_a_drop_first_on_nessie_of_a_small_and_a_50000_file_table_purges_exactly(
    nessie: ReferenceFrontDoor, s3: S3Store, files: int
) -> None:
    """How long the DELETE took is printed, not asserted (one run on a shared machine)."""
    shape = TableShape(manifests=max(files // 500, 1), files_per_manifest=min(files, 500))
    name = f"l{files}{uuid.uuid4().hex[:6]}"
    table = await asyncio.to_thread(synthetic_table, nessie.upstream(), (NAMESPACE, name), shape)
    # Every file the metadata reaches is to go: the purge is as big as the table.
    table.transaction().set_properties({"gc.enabled": "true"}).commit_transaction()
    table = nessie.upstream().load_table((NAMESPACE, name))
    reach, before = await asyncio.to_thread(reach_of, table), s3.list(table.location())
    began = time.perf_counter()
    answer = await asyncio.to_thread(nessie.drop, KEEPS, NAMESPACE, name, purge=True)
    answered = time.perf_counter() - began
    assert answer.status_code == 204, answer.text
    status = (await nessie.purges.wait(answer.headers[PURGE_ID_HEADER])).status
    assert status.planned.content_files == shape.content_files == len(reach.content)
    assert_purged_as_iceberg_would(status, reach, before, s3.list(table.location()))
    print(f"Nessie, drop first, {files} files: answered in {answered * 1000:.0f} ms")
