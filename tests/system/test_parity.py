"""The deleted set equals Iceberg's dropTableData set (plus the history sweep), nothing else."""

from __future__ import annotations

from pyiceberg.catalog.sql import SqlCatalog

from icepurge.api.clients.temporal_client import PurgeClient
from icepurge.contract.counts import Category, SkipReason
from icepurge.contract.states import PurgeState
from tests.expected import drop_table_data_set, history_set
from tests.purge_helpers import purge, request_for
from tests.store import S3Store
from tests.tables import rich_table, simple_table


async def test_strict_parity_deletes_exactly_the_drop_table_data_set(
    catalog: SqlCatalog, purges: PurgeClient, s3: S3Store
) -> None:
    table = rich_table(catalog, ("parity",), "strict")
    expected = drop_table_data_set(table.io, table.metadata_location)
    before = s3.list(table.location())
    assert any("pos-deletes" in path for path in expected)
    assert any("eq-deletes" in path for path in expected)
    assert any(path.endswith(".puffin") for path in expected)
    assert any("partition-stats" in path for path in expected)

    report = await purge(purges, request_for(table, s3.properties, history_sweep=False))

    deleted = before - s3.list(table.location())
    assert report.status.state is PurgeState.SUCCEEDED
    assert deleted == expected & before
    counts = report.status.counts
    assert counts.of(Category.POSITION_DELETE_FILES).deleted >= 1
    assert counts.of(Category.EQUALITY_DELETE_FILES).deleted >= 1
    assert counts.of(Category.STATISTICS_FILES).deleted == 2
    assert counts.of(Category.METADATA_FILES).deleted == len(table.metadata.metadata_log) + 1


async def test_history_sweep_leaves_only_never_referenced_files(
    catalog: SqlCatalog, purges: PurgeClient, s3: S3Store
) -> None:
    table = rich_table(catalog, ("parity",), "sweep")
    planted = f"{table.location()}/data/never-referenced.parquet"
    s3.put(planted)
    expected = drop_table_data_set(table.io, table.metadata_location) | history_set(
        table.io, table.metadata_location
    )
    before = s3.list(table.location())
    # The expired snapshots left files that strict parity would leak.
    assert (before - drop_table_data_set(table.io, table.metadata_location)) - {planted}

    report = await purge(purges, request_for(table, s3.properties))

    after = s3.list(table.location())
    assert report.status.state is PurgeState.SUCCEEDED
    assert after == {planted}
    assert before - after == expected & before


async def test_second_table_in_same_bucket_is_untouched(
    catalog: SqlCatalog, purges: PurgeClient, s3: S3Store
) -> None:
    victim = simple_table(catalog, ("safety",), "victim")
    neighbour = simple_table(catalog, ("safety",), "victim_neighbour")
    neighbour_files = s3.list(neighbour.location())

    await purge(purges, request_for(victim, s3.properties))

    assert s3.list(victim.location()) == set()
    assert s3.list(neighbour.location()) == neighbour_files


async def test_reachable_file_outside_table_locations_is_skipped_and_reported(
    catalog: SqlCatalog, purges: PurgeClient, s3: S3Store
) -> None:
    source = simple_table(catalog, ("safety",), "source", appends=1)
    borrowed = next(task.file for task in source.scan().plan_files())
    table = simple_table(catalog, ("safety",), "borrower", appends=1)
    with table.transaction() as transaction, transaction.update_snapshot().fast_append() as append:
        append.append_data_file(borrowed)
    table = catalog.load_table(("safety", "borrower"))

    report = await purge(purges, request_for(table, s3.properties))

    assert s3.exists(borrowed.file_path)
    assert s3.list(table.location()) == set()
    skipped = report.status.counts.of(Category.DATA_FILES).skipped
    assert skipped[SkipReason.FOREIGN_LOCATION] == 1


async def test_gc_disabled_keeps_content_and_deletes_the_rest(
    catalog: SqlCatalog, purges: PurgeClient, s3: S3Store
) -> None:
    table = simple_table(catalog, ("safety",), "nogc", properties={"gc.enabled": "false"})
    content = {task.file.file_path for task in table.scan().plan_files()}
    before = s3.list(table.location())

    report = await purge(purges, request_for(table, s3.properties))

    assert report.status.gc_enabled is False
    assert s3.list(table.location()) == content
    assert before - content == before - s3.list(table.location())
    data = report.status.counts.of(Category.DATA_FILES)
    assert data.deleted == 0
    assert data.skipped[SkipReason.GC_DISABLED] == len(content)


async def test_dry_run_deletes_nothing_and_reports_the_would_delete_set(
    catalog: SqlCatalog, purges: PurgeClient, s3: S3Store
) -> None:
    table = rich_table(catalog, ("safety",), "dry")
    before = s3.list(table.location())
    expected = drop_table_data_set(table.io, table.metadata_location) | history_set(
        table.io, table.metadata_location
    )

    report = await purge(purges, request_for(table, s3.properties, dry_run=True))

    assert s3.list(table.location()) == before
    assert report.status.state is PurgeState.SUCCEEDED
    assert report.status.counts.total().deleted == 0
    assert report.status.report_location is not None
    raw = s3.client.get_object(
        Bucket=report.status.report_location.split("/")[2],
        Key=report.status.report_location.split("/", 3)[3],
    )["Body"].read()
    from icepurge.activities.finalize.finalizer import PurgeReportObject

    would_delete = set(PurgeReportObject.model_validate_json(raw).would_delete)
    assert would_delete == expected
