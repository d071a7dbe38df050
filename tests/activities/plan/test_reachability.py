"""Edges of what a purge reaches: metadata files older than the current log, version-hint.text,
per-key errors of DeleteObjects, and stores other than S3 (through PyIceberg's FileIO)."""

from __future__ import annotations

from pathlib import Path

from pyiceberg.catalog.sql import SqlCatalog

from icepurge.api.clients.temporal_client import PurgeClient
from icepurge.contract.counts import Category
from icepurge.contract.states import PurgeState
from icepurge.devstack.s3_proxy import s3_proxy, through_proxy
from icepurge.devstack.stack import EmbeddedStack
from tests.purge_helpers import purge, request_for
from tests.store import S3Store
from tests.tables import simple_table


async def test_metadata_older_than_the_current_log_and_version_hint_are_deleted(
    catalog: SqlCatalog, purges: PurgeClient, s3: S3Store
) -> None:
    table = simple_table(
        catalog, ("reach",), "short_log", appends=5, properties={"write.metadata.previous-versions-max": "2"}
    )
    assert len(table.metadata.metadata_log) == 2
    hint = f"{table.location()}/metadata/version-hint.text"
    s3.put(hint, b"6")
    metadata_files = {path for path in s3.list(table.location()) if path.endswith(".metadata.json")}
    assert len(metadata_files) == 6

    report = await purge(purges, request_for(table, s3.properties, history_sweep=False))

    assert report.status.state is PurgeState.SUCCEEDED
    assert s3.list(table.location()) == set()
    assert report.status.counts.of(Category.METADATA_FILES).deleted == len(metadata_files) + 1


async def test_per_key_delete_errors_are_counted_as_failures(
    catalog: SqlCatalog, purges: PurgeClient, s3: S3Store, stack: EmbeddedStack
) -> None:
    table = simple_table(catalog, ("reach",), "denied_key", appends=2)
    data_files = sorted(task.file.file_path for task in table.scan().plan_files())
    denied = data_files[0]
    with s3_proxy(stack.ports.s3, upstream_properties=s3.properties) as (port, faults):
        faults.deny_keys_containing = denied.rsplit("/", 1)[1]
        properties = through_proxy(s3.properties, port)
        report = await purge(purges, request_for(table, properties))

    status = report.status
    assert status.state is PurgeState.SUCCEEDED_WITH_ERRORS
    assert status.failures_total == 1
    assert status.failure_sample[0].path == denied
    assert status.failure_sample[0].error.startswith("AccessDenied")
    assert s3.exists(denied)
    # Only the denied file's manifest and the metadata chain remain for a re-run.
    remaining = s3.list(table.location())
    assert denied in remaining
    assert table.metadata_location in remaining
    assert remaining.isdisjoint(data_files[1:])


async def test_a_table_on_the_local_filesystem_is_purged_through_fileio(
    purges: PurgeClient, tmp_path: Path
) -> None:
    warehouse = tmp_path / "warehouse"
    warehouse.mkdir()
    catalog = SqlCatalog("local", uri=f"sqlite:///{tmp_path / 'c.sqlite'}", warehouse=f"file://{warehouse}")
    table = simple_table(catalog, ("reach",), "on_disk")
    table_dir = Path(table.location().removeprefix("file://"))
    assert any(path.is_file() for path in table_dir.rglob("*"))

    report = await purge(purges, request_for(table, {}))

    assert report.status.state is PurgeState.SUCCEEDED
    assert [path for path in table_dir.rglob("*") if path.is_file()] == []
    assert report.status.counts.of(Category.DATA_FILES).deleted == 3
