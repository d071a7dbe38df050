"""Apache Iceberg's own REST catalog server as the front door's upstream: a REST catalog that keeps
a table's files on a plain drop, so `upstream_keeps_storage` and `pass_through` run against the
real thing. PyIceberg is the client here; Spark SQL is in test_engines_spark_sql.py."""

from __future__ import annotations

import asyncio
import time
import uuid

import pytest
from temporalio.client import Client

from icepurge.api.clients.temporal_client import PurgeClient
from icepurge.api.server.front_door.routes import PURGE_ID_HEADER
from icepurge.contract.names import (
    DROP_TABLE_ACTIVITY,
    LOAD_PLAN_AND_DROP_ACTIVITY,
    LOAD_TABLE_ACTIVITY,
    PLAN_ACTIVITY,
)
from icepurge.contract.states import PurgeState
from icepurge.devstack.synthetic_table import TableShape, synthetic_table
from tests.engines_front_door import (
    KEEPS,
    PASSING,
    PLANS_FIRST,
    ReferenceFrontDoor,
    purged_through_the_door,
    purges_of,
)
from tests.purge_helpers import activities_in_order
from tests.store import S3Store
from tests.tables import simple_table

pytestmark = pytest.mark.engines
NAMESPACE = "engines"


@pytest.fixture
def purges(reference: ReferenceFrontDoor) -> PurgeClient:
    reference.upstream().create_namespace_if_not_exists((NAMESPACE,))
    return reference.purges


async def test_a_drop_with_purge_drops_first_and_icepurge_deletes_every_file(
    reference: ReferenceFrontDoor, purges: PurgeClient, s3: S3Store, temporal_client: Client
) -> None:
    purge_id, status, _ = await purged_through_the_door(reference, purges, s3, NAMESPACE, KEEPS)
    # The reference server keeps storage on a plain drop: every file was still there to delete.
    assert not status.storage_deleted_by_catalog
    steps = {LOAD_TABLE_ACTIVITY, DROP_TABLE_ACTIVITY, PLAN_ACTIVITY}
    order = [step for step in await activities_in_order(temporal_client, purge_id) if step in steps]
    assert order == [LOAD_TABLE_ACTIVITY, DROP_TABLE_ACTIVITY, PLAN_ACTIVITY]


async def test_a_plain_drop_stays_plain_and_the_files_stay(
    reference: ReferenceFrontDoor, purges: PurgeClient, s3: S3Store
) -> None:
    name = f"p{uuid.uuid4().hex[:8]}"
    door = reference.door(KEEPS)
    table = simple_table(door, (NAMESPACE,), name, appends=2)
    files = s3.list(table.location())
    answer = await asyncio.to_thread(reference.drop, KEEPS, NAMESPACE, name, purge=False)
    assert answer.status_code == 204, answer.text
    assert PURGE_ID_HEADER not in answer.headers
    assert not reference.upstream().table_exists((NAMESPACE, name))
    await asyncio.sleep(2)
    assert await purges_of(purges, KEEPS, NAMESPACE, name) == []
    assert s3.list(table.location()) == files


async def test_plan_first_on_an_upstream_that_keeps_storage_is_exact_too(
    reference: ReferenceFrontDoor, purges: PurgeClient, s3: S3Store, temporal_client: Client
) -> None:
    purge_id, _, _ = await purged_through_the_door(reference, purges, s3, NAMESPACE, PLANS_FIRST)
    # A small table: one step loads, plans, keeps the plan, then drops.
    assert LOAD_PLAN_AND_DROP_ACTIVITY in await activities_in_order(temporal_client, purge_id)


async def test_pass_through_drops_as_the_caller_and_purges_exactly(
    reference: ReferenceFrontDoor, purges: PurgeClient, s3: S3Store
) -> None:
    """The caller's Authorization goes upstream unchanged (the reference server checks none); the
    front door records the purge, drops the table as the caller, and confirms the drop."""
    _, status, _ = await purged_through_the_door(reference, purges, s3, NAMESPACE, PASSING)
    assert status.dropped_at is not None


@pytest.mark.parametrize("files", [10, 50_000])
async def test_a_drop_first_of_a_small_and_a_50000_file_table_purges_exactly(
    reference: ReferenceFrontDoor, purges: PurgeClient, s3: S3Store, files: int
) -> None:
    """With upstream_keeps_storage the DELETE waits for a load and a drop, never for the plan.
    How long it took is printed, not asserted: one run on a shared machine is no measurement."""
    shape = TableShape(manifests=max(files // 500, 1), files_per_manifest=min(files, 500))
    name = f"l{files}{uuid.uuid4().hex[:6]}"
    table = await asyncio.to_thread(synthetic_table, reference.upstream(), (NAMESPACE, name), shape)
    began = time.perf_counter()
    answer = await asyncio.to_thread(reference.drop, KEEPS, NAMESPACE, name, purge=True)
    answered = time.perf_counter() - began
    assert answer.status_code == 204, answer.text
    status = (await purges.wait(answer.headers[PURGE_ID_HEADER])).status
    assert status.state is PurgeState.SUCCEEDED, status
    assert status.planned.content_files == shape.content_files
    assert status.counts.total().deleted == status.planned.files
    assert s3.list(table.location()) == set()
    print(f"drop first, {files} files: answered in {answered * 1000:.0f} ms")
