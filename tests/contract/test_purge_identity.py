"""A purge touches exactly what it was asked for, however the requests before it went: a namespace
purge with another scope, or one started after an earlier one closed, never works from the
earlier one's table list, child ids or checkpoints; a table re-created under a purged name is a
new table, swept afresh. Every sequence runs on one worker, without a restart in between."""

from __future__ import annotations

import asyncio
import time
from datetime import UTC, datetime
from functools import partial

import pytest
from pyiceberg.catalog.sql import SqlCatalog

from icepurge.activities.delete.spark_engine import chunk_job_tag
from icepurge.api.clients.errors import PurgeFailedError
from icepurge.api.clients.temporal_client import PurgeClient
from icepurge.api.clients.temporal_namespace_client import namespace_request
from icepurge.contract.namespace_status import NamespacePurgeState
from icepurge.contract.request import PurgeRequest
from icepurge.contract.states import PurgeState
from icepurge.contract.sweep_steps import SweepInput
from icepurge.worker.settings import WorkerSettings
from tests.batch_records import all_batch_records
from tests.conftest import LAKE_CATALOG
from tests.purge_helpers import children_of, eventually
from tests.store import S3Store
from tests.tables import simple_table

_NOW = datetime(2026, 1, 1, tzinfo=UTC)
_SNAPSHOT = PurgeRequest(
    catalog="c",
    namespace=["n"],
    table="t",
    metadata_location="s3://b/t/metadata/1.metadata.json",
    requested_by="pytest",
)
# A namespace purge that never reaches its end fails the test in this time, not the suite's.
NAMESPACE_PURGE_SECONDS = 90


async def _finished(purges: PurgeClient, purge_id: str) -> None:
    await asyncio.wait_for(purges.namespaces.wait(purge_id), NAMESPACE_PURGE_SECONDS)


async def _child_tables(purges: PurgeClient, purge_id: str) -> set[str]:
    return {(await purges.status(child)).table for child in await children_of(purges, purge_id)}


async def test_a_namespace_purge_with_another_scope_purges_only_its_own_tables(
    lake: SqlCatalog, purges: PurgeClient, s3: S3Store
) -> None:
    top = simple_table(lake, ("scoped",), "top1", appends=1)
    nested = {name: simple_table(lake, ("scoped", "n"), name, appends=1) for name in ("x1", "x2")}
    nested_files = {name: s3.list(table.location()) for name, table in nested.items()}
    top_files = s3.list(top.location())
    first = await purges.namespaces.start(
        namespace_request(
            LAKE_CATALOG,
            ["scoped"],
            requested_by="pytest",
            recursive=True,
            max_concurrent_tables=1,
            options={"purge_after_seconds": 600},
        )
    )
    await eventually(
        partial(purges.namespaces.status, first),
        lambda status: [table.state for table in status.running] == ["SCHEDULED"],
    )
    assert not lake.table_exists(("scoped", "top1"))
    await purges.cancel(first)
    with pytest.raises(PurgeFailedError) as cancelled:
        await purges.namespaces.wait(first)
    assert cancelled.value.state == "CANCELLED"
    fresh = {name: simple_table(lake, ("scoped",), name, appends=1) for name in ("new1", "new2")}
    fresh_files = {name: s3.list(table.location()) for name, table in fresh.items()}

    second = await purges.namespaces.start(
        namespace_request(LAKE_CATALOG, ["scoped"], requested_by="pytest", batch_tables=0)
    )
    await _finished(purges, second)
    status = await purges.namespaces.status(second)

    assert second != first
    assert status.state is NamespacePurgeState.SUCCEEDED, status
    assert (status.tables_total, status.tables_done, status.tables_failed) == (2, 2, 0)
    assert await _child_tables(purges, second) == {"new1", "new2"}
    for name, files in fresh_files.items():
        assert not lake.table_exists(("scoped", name))
        assert files and not any(s3.exists(uri) for uri in files), name
    # The nested tables were outside the second request's scope: untouched.
    for name, files in nested_files.items():
        assert lake.table_exists(("scoped", "n", name))
        assert all(s3.exists(uri) for uri in files), name
    # The first run's cancelled purge left top1 dropped with its files, as cancel promises.
    assert all(s3.exists(uri) for uri in top_files)
    # `scoped` still holds the namespace `scoped.n`.
    assert lake.namespace_exists(("scoped",))


async def test_a_later_namespace_purge_purges_the_tables_that_are_there_now(
    lake: SqlCatalog, purges: PurgeClient, s3: S3Store, worker_settings: WorkerSettings
) -> None:
    simple_table(lake, ("again",), "t0", appends=1)
    first = await purges.namespaces.start(namespace_request(LAKE_CATALOG, ["again"], requested_by="pytest"))
    await _finished(purges, first)
    assert not lake.namespace_exists(("again",))
    # A table re-created under the purged name is a new table; a second one beside it.
    recreated = [simple_table(lake, ("again",), name, appends=1) for name in ("t0", "t1")]
    files = set().union(*(s3.list(table.location()) for table in recreated))

    second = await purges.namespaces.start(namespace_request(LAKE_CATALOG, ["again"], requested_by="pytest"))
    await _finished(purges, second)
    status = await purges.namespaces.status(second)

    # The same request names the same purge, run again now that the first one closed.
    assert second == first
    assert status.state is NamespacePurgeState.SUCCEEDED, status
    assert (status.tables_total, status.tables_done, status.tables_failed) == (2, 2, 0)
    assert status.files.deleted == len(files)
    assert not any(s3.exists(uri) for uri in files)
    assert not lake.namespace_exists(("again",))
    # Its table purges are this run's two, not the first run's as well: each a record its batch
    # kept, none a workflow; both runs' records are under the same namespace purge's id.
    records = [record.status for record in all_batch_records(s3, worker_settings.state_location, second)]
    assert sorted(record.table for record in records) == ["t0", "t0", "t1"]
    began = status.started_at
    assert began is not None
    now = [record for record in records if record.started_at and record.started_at >= began]
    assert sorted(record.table for record in now) == ["t0", "t1"]
    assert len({record.purge_id for record in records}) == 3
    assert await children_of(purges, second) == []


async def test_a_table_dropped_recreated_and_purged_again_by_name_is_swept_afresh(
    lake: SqlCatalog, purges: PurgeClient, s3: S3Store
) -> None:
    sweep = {"sweep_location": True, "sweep_grace_seconds": 0}
    identifier = ("reborn", "t")
    for generation in range(2):
        table = simple_table(lake, identifier[:1], identifier[1], appends=1)
        orphan = f"{table.location()}/data/aborted-{generation}.parquet"
        s3.put(orphan, b"never referenced")
        # Listing times have one-second resolution: the orphan must predate the purge's start.
        time.sleep(1.2)
        purge_id = await purges.purge_by_name(
            LAKE_CATALOG, list(identifier[:1]), identifier[1], requested_by="pytest", options=sweep
        )
        status = (await purges.wait(purge_id)).status
        assert status.state is PurgeState.SUCCEEDED, status
        assert status.sweep is not None and status.sweep.applied, status.sweep
        assert (generation, status.sweep.swept) == (generation, 1)
        assert (generation, s3.list(table.location())) == (generation, set())


def test_two_runs_of_one_purge_tag_their_spark_jobs_apart() -> None:
    """A run cancelled late (its activity learns it from a heartbeat) cancels its jobs by their
    tag: a later run under the same purge id must not share it."""
    first = chunk_job_tag("icepurge-p", "s3://state/icepurge-p/run-1/plan.json", 0)
    later = chunk_job_tag("icepurge-p", "s3://state/icepurge-p/run-2/plan.json", 0)
    assert first != later
    assert first == chunk_job_tag("icepurge-p", "s3://state/icepurge-p/run-1/plan.json", 0)
    assert first.startswith("icepurge-p-") and first.endswith("-chunk-0")
    sweep = {"purge_id": "icepurge-p", "request": _SNAPSHOT, "prefixes": ["s3://b/t"], "cutoff": _NOW}
    assert SweepInput(**sweep, run_chain="run-1").job_tag != SweepInput(**sweep, run_chain="run-2").job_tag
