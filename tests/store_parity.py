"""Promises checked the same way on every store other than S3 (abfs:// on Azurite, gs:// on
fake-gcs-server): parity with Iceberg's dropTableData set (the Spark engine's tests share it), the
history sweep and the location guard, the sweep step, a listing in pages."""

from __future__ import annotations

import time
import uuid
from datetime import UTC, datetime
from typing import Any, Protocol

from pyiceberg.catalog.sql import SqlCatalog
from pyiceberg.table import Table
from temporalio.testing import ActivityEnvironment

from icepurge.activities.sweep.sweep_activities import SweepActivities
from icepurge.api.clients.temporal_client import PurgeClient
from icepurge.contract.counts import Category, SkipReason
from icepurge.contract.request import PurgeRequest
from icepurge.contract.states import PurgeState
from icepurge.contract.sweep_steps import SweepInput
from icepurge.stores.store import Store
from icepurge.worker.settings import WorkerSettings
from tests.expected import drop_table_data_set, history_set
from tests.purge_helpers import assert_counts_add_up, purge, request_for
from tests.tables import simple_table


class StoreObjects(Protocol):
    """Looks at a store directly (not through icepurge)."""

    properties: dict[str, str]

    def list(self, location: str) -> set[str]: ...

    def put(self, uri: str, body: bytes = b"x") -> None: ...

    def exists(self, uri: str) -> bool: ...


async def assert_store_parity(purges: PurgeClient, table: Table, blobs: StoreObjects, **options: Any) -> None:
    expected = drop_table_data_set(table.io, table.metadata_location)
    before = blobs.list(table.location())
    assert any(path.endswith(".puffin") for path in expected)
    assert any("pos-deletes" in path for path in expected)

    report = await purge(purges, request_for(table, blobs.properties, history_sweep=False, **options))

    deleted = before - blobs.list(table.location())
    assert report.status.state is PurgeState.SUCCEEDED
    assert deleted == expected & before
    counts = report.status.counts
    assert counts.of(Category.METADATA_FILES).deleted == len(table.metadata.metadata_log) + 1
    assert counts.of(Category.STATISTICS_FILES).deleted == 2
    # Batches, not a request per file.
    assert report.status.delete_requests < len(deleted) / 2
    assert_counts_add_up(report.status)


async def assert_history_swept_and_guarded(
    purges: PurgeClient, catalog: SqlCatalog, objects: StoreObjects, namespace: str
) -> None:
    """A table whose expired snapshots left files behind, that borrows a neighbour's data file,
    with an object planted that nothing references: the purge deletes the table's files and
    its history's, keeps the borrowed file and the neighbour's, and leaves the planted one (no
    sweep asked)."""
    source = simple_table(catalog, (namespace,), "source", appends=1)
    neighbour_files = objects.list(source.location())
    borrowed = next(task.file for task in source.scan().plan_files())
    table = simple_table(catalog, (namespace,), "borrower")
    with table.transaction() as transaction, transaction.update_snapshot().fast_append() as append:
        append.append_data_file(borrowed)
    early = [snapshot.snapshot_id for snapshot in table.snapshots()[:2]]
    table.maintenance.expire_snapshots().by_ids(early).commit()
    table = catalog.load_table((namespace, "borrower"))
    assert history_set(table.io, table.metadata_location), "expired snapshots left files to sweep"
    planted = f"{table.location()}/data/never-referenced.parquet"
    objects.put(planted)
    expected = drop_table_data_set(table.io, table.metadata_location) | history_set(
        table.io, table.metadata_location
    )
    before = objects.list(table.location())

    report = await purge(purges, request_for(table, objects.properties))

    assert report.status.state is PurgeState.SUCCEEDED
    assert objects.list(table.location()) == {planted}
    assert before - {planted} == (expected - {borrowed.file_path}) & before
    assert objects.list(source.location()) == neighbour_files
    assert objects.exists(borrowed.file_path)
    assert report.status.counts.of(Category.DATA_FILES).skipped[SkipReason.FOREIGN_LOCATION] == 1
    assert_counts_add_up(report.status)


def assert_sweep_lists_and_deletes(settings: WorkerSettings, location: str, objects: StoreObjects) -> None:
    """The sweep step on its own: four objects older than the cutoff swept, a newer one kept."""
    old = [f"{location}/data/old-{index}.parquet" for index in range(3)] + [f"{location}/top.json"]
    for uri in old:
        objects.put(uri)
    time.sleep(1.2)
    cutoff = datetime.now(UTC)
    time.sleep(1.2)
    recent = f"{location}/data/recent.parquet"
    objects.put(recent)
    request = PurgeRequest.model_validate(
        {
            "catalog": "tests",
            "namespace": ["swept"],
            "table": "t",
            "metadata_location": f"{location}/metadata/v1.metadata.json",
            "file_io_properties": objects.properties,
            "requested_by": "pytest",
        }
    )
    step = SweepInput(
        purge_id=f"sweep-{uuid.uuid4().hex[:8]}", request=request, prefixes=[location], cutoff=cutoff
    )
    result = ActivityEnvironment().run(SweepActivities(settings.activity_settings()).sweep_location, step)
    assert (result.swept, result.kept_recent, result.failed) == (4, 1, 0)
    assert objects.list(location) == {recent}


def listed_in_pages(store: Store, prefix: str, limit: int) -> tuple[list[str], int]:
    """Every object under `prefix`, listed `limit` at a time through icepurge's store, and the
    pages it took."""
    listed: list[str] = []
    token: str | None = None
    pages = 0
    while True:
        page = store.list_page(prefix, token, limit=limit, flat=False)
        listed += [item.uri for item in page.objects]
        pages += 1
        token = page.next_token
        if token is None:
            return listed, pages
