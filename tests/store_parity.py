"""A purge of a table on a store other than S3 (abfs:// on Azurite, gs:// on fake-gcs-server),
checked against Iceberg's dropTableData set: shared by the stores' tests and the Spark engine's."""

from __future__ import annotations

from typing import Any, Protocol

from pyiceberg.table import Table

from icepurge.api.clients.temporal_client import PurgeClient
from icepurge.contract.counts import Category
from icepurge.contract.states import PurgeState
from tests.expected import drop_table_data_set
from tests.purge_helpers import assert_counts_add_up, purge, request_for


class StoreObjects(Protocol):
    """Looks at a store directly (not through icepurge)."""

    properties: dict[str, str]

    def list(self, location: str) -> set[str]: ...


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
