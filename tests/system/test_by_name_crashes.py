"""A worker that dies right after the plan step or right after the drop step of a purge by name
(dropping after planning, or before it), or right after either step of the express lane (load,
plan and drop, in a catalog that keeps the storage and in one that deletes it; guard, delete and
finalize), or right after holding a table (options.hold_namespace), its work done, its result
never reported: the purge still completes, the table is dropped once, and there is one purge
for it."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from pyiceberg.catalog import Catalog
from pyiceberg.catalog.rest import RestCatalog
from pyiceberg.catalog.sql import SqlCatalog
from pyiceberg.table import Table
from temporalio.client import Client

from icepurge.api.clients.listing import PurgeFilter
from icepurge.api.clients.temporal_client import PurgeClient
from icepurge.contract.names import (
    DROP_TABLE_ACTIVITY,
    FINISH_SMALL_PURGE_ACTIVITY,
    HOLD_TABLE_ACTIVITY,
    LOAD_PLAN_AND_DROP_ACTIVITY,
    PLAN_ACTIVITY,
)
from icepurge.contract.states import PurgeState
from icepurge.devstack.stack import EmbeddedStack
from tests.conftest import LAKE_CATALOG, REST_CATALOG
from tests.dying_worker import died, start_dying_worker
from tests.purge_helpers import assert_counts_add_up
from tests.store import S3Store
from tests.tables import simple_table

NAMESPACE = ("crashy",)
HOLD_NAMESPACE = "crashy_held"


@pytest.fixture(scope="module")
def upstream(rest_upstream: RestCatalog) -> RestCatalog:
    return rest_upstream


async def _crash_then_finish(
    stack: EmbeddedStack,
    client: Client,
    activity_name: str,
    catalog: str,
    table: str,
    options: dict[str, Any],
) -> tuple[str, PurgeClient]:
    queue = f"icepurge-dying-{table}"
    dying = start_dying_worker(stack, queue, activity_name)
    purges = PurgeClient(client, queue)
    purge_id = await purges.purge_by_name(
        catalog, list(NAMESPACE), table, requested_by="pytest", options=options
    )
    await asyncio.wait_for(died(dying), timeout=120)
    survivor = stack.worker_process(f"survivor-{table}", ICEPURGE_TASK_QUEUE=queue)
    survivor.start()
    try:
        report = await asyncio.wait_for(purges.wait(purge_id), timeout=180)
    finally:
        survivor.stop()
    assert report.status.state is PurgeState.SUCCEEDED, report.status
    assert_counts_add_up(report.status)
    return purge_id, purges


async def test_a_worker_dying_after_the_plan_or_the_drop_loses_nothing_and_drops_once(
    lake: SqlCatalog, upstream: RestCatalog, temporal_client: Client, s3: S3Store, stack: EmbeddedStack
) -> None:
    """The third case drops before planning: the worker dies with the table dropped and no plan.
    The express lane's load, plan and drop dies with the table dropped and its plan kept: in
    SeaweedFS's catalog, with the table's storage gone too (the retry learns it from the kept
    drop, not from the metadata file it can no longer find). The held table dies renamed: the
    retry finds it under its run's own name and holds nothing else."""
    step_by_step = {"express_lane": False}
    cases: list[tuple[str, Catalog, Table, dict[str, Any]]] = [
        (PLAN_ACTIVITY, lake, simple_table(lake, NAMESPACE, "after_plan", appends=3), step_by_step),
        (DROP_TABLE_ACTIVITY, lake, simple_table(lake, NAMESPACE, "after_drop", appends=3), step_by_step),
        (
            DROP_TABLE_ACTIVITY,
            lake,
            simple_table(lake, NAMESPACE, "dropped_unplanned", appends=3),
            {"drop_before_plan": True},
        ),
        (LOAD_PLAN_AND_DROP_ACTIVITY, lake, simple_table(lake, NAMESPACE, "after_dropping", appends=3), {}),
        (
            LOAD_PLAN_AND_DROP_ACTIVITY,
            upstream,
            simple_table(upstream, NAMESPACE, "storage_dropped", appends=3),
            {},
        ),
        (FINISH_SMALL_PURGE_ACTIVITY, lake, simple_table(lake, NAMESPACE, "after_finish", appends=3), {}),
        (
            HOLD_TABLE_ACTIVITY,
            upstream,
            simple_table(upstream, NAMESPACE, "held", appends=3),
            {"hold_namespace": HOLD_NAMESPACE},
        ),
    ]
    names = {id(catalog): name for catalog, name in ((lake, LAKE_CATALOG), (upstream, REST_CATALOG))}
    finished = await asyncio.gather(
        *(
            _crash_then_finish(
                stack, temporal_client, activity_name, names[id(catalog)], table.name()[-1], options
            )
            for activity_name, catalog, table, options in cases
        )
    )
    logs = "".join(path.read_text() for path in (stack.state_dir / "logs").glob("*.log"))
    assert s3.properties["s3.secret-access-key"] not in logs
    for (purge_id, purges), (activity_name, catalog, table, _) in zip(finished, cases, strict=True):
        catalog_name = names[id(catalog)]
        assert not catalog.table_exists(table.name())
        assert s3.list(table.location()) == set()
        runs = await purges.list(PurgeFilter(catalog=catalog_name, table=table.name()[-1]), page_size=10)
        assert [item.purge_id for item in runs.items] == [purge_id]
        status = (await purges.wait(purge_id)).status
        name = ".".join(table.name())
        if activity_name == HOLD_TABLE_ACTIVITY:
            assert status.held_as is not None and status.held_as.startswith(f"{HOLD_NAMESPACE}.")
            assert upstream.list_tables(HOLD_NAMESPACE) == []
            assert status.storage_deleted_by_catalog, status
            name = status.held_as
        # The entry was dropped by one attempt: a retried drop found it gone and went on.
        assert logs.count(f"dropped the catalog entry of {catalog_name}.{name} ") == 1
        if activity_name == FINISH_SMALL_PURGE_ACTIVITY:
            # The lost finish answers from its report object: every file counted once, as deleted.
            assert status.counts.total().deleted == status.planned.files == 13, status.counts
        if activity_name in (LOAD_PLAN_AND_DROP_ACTIVITY, HOLD_TABLE_ACTIVITY):
            # Planned before the drop, every file counted once: deleted, or found gone with the
            # storage the catalog deleted.
            total = status.counts.total()
            assert total.deleted + total.already_missing == status.planned.files > 0, status.counts
            assert status.storage_deleted_by_catalog is (catalog is upstream), status
        if activity_name in (LOAD_PLAN_AND_DROP_ACTIVITY, FINISH_SMALL_PURGE_ACTIVITY):
            assert status.chunks_done == status.chunks_total
