"""Planning never takes a transient fault for a missing file: reads are retried, nothing is
deleted while they fail; only a truly absent file is skipped, and then it is reported."""

from __future__ import annotations

import asyncio
import socket
from urllib.parse import urlsplit

import pytest
from pyiceberg.catalog.sql import SqlCatalog
from pyiceberg.io import load_file_io
from pyiceberg.manifest import DataFileContent, ManifestEntry, ManifestEntryStatus, write_manifest
from pyiceberg.partitioning import UNPARTITIONED_PARTITION_SPEC
from pyiceberg.serializers import FromInputFile
from pyiceberg.table import Table
from pyiceberg.table.snapshots import Operation
from temporalio.client import Client

from icepurge.activities.finalize.finalizer import PurgeReportObject
from icepurge.activities.plan.metadata_reader import read_bytes
from icepurge.api.clients.temporal_client import PurgeClient
from icepurge.contract.counts import Category
from icepurge.contract.names import PLAN_AND_FINISH_ACTIVITY, STATUS_QUERY
from icepurge.contract.states import PurgeState
from icepurge.contract.status import PurgeStatus
from icepurge.devstack.iceberg_writers import AppendManifests
from icepurge.devstack.s3_proxy import s3_proxy, through_proxy
from icepurge.devstack.stack import EmbeddedStack
from icepurge.devstack.synthetic_table import TableShape, content_file, synthetic_table
from icepurge.stores.refusals import names_a_refusal
from tests.expected import drop_table_data_set, history_set
from tests.purge_helpers import assert_counts_add_up, purge, request_for
from tests.store import S3Store, key_of
from tests.tables import rich_table


def _report(s3: S3Store, location: str) -> PurgeReportObject:
    parts = urlsplit(location)
    raw = s3.client.get_object(Bucket=parts.netloc, Key=parts.path.lstrip("/"))["Body"].read()
    return PurgeReportObject.model_validate_json(raw)


async def _workflow_status_when_retrying(client: Client, purge_id: str) -> PurgeStatus:
    """The workflow's own status (its query, no server-side pending-activity view added)."""
    handle = client.get_workflow_handle(purge_id)
    while True:
        status: PurgeStatus = await handle.query(STATUS_QUERY, result_type=PurgeStatus)
        if status.retrying is not None:
            return status
        await asyncio.sleep(0.2)


async def test_slow_down_on_older_metadata_is_retried_and_nothing_is_skipped(
    catalog: SqlCatalog, purges: PurgeClient, s3: S3Store, stack: EmbeddedStack, temporal_client: Client
) -> None:
    table = rich_table(catalog, ("plan_faults",), "slow_down")
    older = [entry.metadata_file for entry in table.metadata.metadata_log]
    before = s3.list(table.location())
    owned = drop_table_data_set(table.io, table.metadata_location) | history_set(
        table.io, table.metadata_location
    )
    with s3_proxy(stack.ports.s3) as (port, faults):
        faults.failing_reads = {key_of(path) for path in older[:3]}
        purge_id = await purges.start(request_for(table, through_proxy(s3.properties, port)))
        # The workflow itself hears of the failed attempt: its query, events and details say so.
        status = await asyncio.wait_for(_workflow_status_when_retrying(temporal_client, purge_id), 120)
        assert status.state is PurgeState.PLANNING
        assert status.retrying is not None
        assert status.retrying.step == PLAN_AND_FINISH_ACTIVITY
        assert status.retrying.attempt >= 2
        assert status.retrying.last_error
        assert s3.properties["s3.secret-access-key"] not in status.retrying.last_error
        assert s3.list(table.location()) == before, "nothing may be deleted while planning can't read"
        faults.failing_reads = set()
        report = await asyncio.wait_for(purges.wait(purge_id), timeout=180)

    assert report.status.state is PurgeState.SUCCEEDED
    assert report.status.unreadable_files == 0
    assert s3.list(table.location()) == set()
    assert before == owned & before
    assert_counts_add_up(report.status)


async def test_a_truly_absent_metadata_file_is_skipped_and_reported(
    catalog: SqlCatalog, purges: PurgeClient, s3: S3Store
) -> None:
    table = rich_table(catalog, ("plan_faults",), "absent")
    gone = table.metadata.metadata_log[1].metadata_file
    parts = urlsplit(gone)
    s3.client.delete_object(Bucket=parts.netloc, Key=parts.path.lstrip("/"))

    present = s3.list(table.location())

    report = await purge(purges, request_for(table, s3.properties))

    status = report.status
    assert status.state is PurgeState.SUCCEEDED
    assert status.unreadable_files == 1
    assert status.report_location is not None
    unreadable = _report(s3, status.report_location).unreadable
    assert [(file.path, file.reason.value) for file in unreadable] == [(gone, "missing")]
    assert_counts_add_up(status)
    metadata = status.counts.of(Category.METADATA_FILES)
    assert metadata.already_missing == 1
    assert status.counts.total().deleted == len(present - s3.list(table.location()))


async def test_files_planning_found_gone_count_as_already_missing_never_as_deleted(
    catalog: SqlCatalog, purges: PurgeClient, s3: S3Store
) -> None:
    """Regression: Spark's expire_snapshots deletes the expired snapshots' manifest lists, which
    older metadata files still name; the purge counted them deleted (S3's bulk delete calls a gone
    key deleted): `deleted 44` for 36 objects, beside `unreadable_files 8`."""
    table = rich_table(catalog, ("plan_faults",), "expired_lists")
    kept = {snapshot.manifest_list for snapshot in table.snapshots()}
    named = {
        snapshot.manifest_list
        for entry in table.metadata.metadata_log
        for snapshot in FromInputFile.table_metadata(table.io.new_input(entry.metadata_file)).snapshots
    }
    expired = named - kept
    assert expired
    for location in expired:
        s3.client.delete_object(Bucket=urlsplit(location).netloc, Key=key_of(location))
    present = s3.list(table.location())

    status = (await purge(purges, request_for(table, s3.properties))).status

    assert status.state is PurgeState.SUCCEEDED
    assert status.unreadable_files == len(expired)
    lists = status.counts.of(Category.MANIFEST_LISTS)
    assert (lists.deleted, lists.already_missing) == (len(kept), len(expired))
    total = status.counts.total()
    assert (total.deleted, total.already_missing) == (len(present), len(expired))
    assert_counts_add_up(status)
    assert s3.list(table.location()) == set()


def _deleted_entries_table(catalog: SqlCatalog, s3: S3Store) -> tuple[Table, str]:
    """A table whose snapshot keeps a manifest (as Java's fast append does) with an EXISTING entry
    and two DELETED: one file that an expiry removed (returned), one it left. Spark's
    expire_snapshots leaves tables so: it removes the files no retained snapshot holds live."""
    table = synthetic_table(
        catalog, ("plan_faults", "deleted_entries"), TableShape(manifests=1, files_per_manifest=2)
    )
    expired, committing = 1, table.metadata.new_snapshot_id()
    kept, removed, left = (f"{table.location()}/data/{name}.parquet" for name in ("kept", "removed", "left"))
    for path in (kept, left):
        s3.put(path)
    writer = write_manifest(
        format_version=2,
        spec=UNPARTITIONED_PARTITION_SPEC,
        schema=table.schema(),
        output_file=table.io.new_output(f"{table.location()}/metadata/deleted-entries-m0.avro"),
        snapshot_id=committing,
        avro_compression="deflate",
    )
    with writer:
        for path, status in (
            (kept, ManifestEntryStatus.EXISTING),
            (removed, ManifestEntryStatus.DELETED),
            (left, ManifestEntryStatus.DELETED),
        ):
            writer.add_entry(
                ManifestEntry.from_args(
                    status=status,
                    snapshot_id=expired,
                    sequence_number=1,
                    file_sequence_number=1,
                    data_file=content_file(path, DataFileContent.DATA),
                )
            )
    with table.transaction() as transaction:
        append = AppendManifests(
            [writer.to_manifest_file()], operation=Operation.APPEND, transaction=transaction, io=table.io
        )
        append._snapshot_id = committing  # the manifest names the snapshot it joins
        append.commit()
    return catalog.load_table(("plan_faults", "deleted_entries")), removed


async def test_files_an_expiry_removed_from_kept_manifests_count_as_already_missing(
    catalog: SqlCatalog, purges: PurgeClient, s3: S3Store
) -> None:
    """A file met only in DELETED entries is asked about first: gone, it counts as already gone,
    never as deleted (S3's bulk delete would call it deleted); there, it is deleted and counted
    so."""
    table, removed = _deleted_entries_table(catalog, s3)
    present = s3.list(table.location())

    status = (await purge(purges, request_for(table, s3.properties))).status

    assert status.state is PurgeState.SUCCEEDED
    assert_counts_add_up(status)
    data = status.counts.of(Category.DATA_FILES)
    assert (data.deleted, data.already_missing) == (4, 1), data
    total = status.counts.total()
    assert total.deleted == len(present)
    assert not s3.exists(removed)
    assert s3.list(table.location()) == set()


async def test_a_statistics_file_already_gone_counts_as_already_missing(
    catalog: SqlCatalog, purges: PurgeClient, s3: S3Store
) -> None:
    """Planning never reads statistics files, and an expiry that cleans up removes those of its
    snapshots while older metadata files still name them: finalize asks the store first."""
    table = rich_table(catalog, ("plan_faults",), "gone_statistics")
    gone = table.metadata.statistics[0].statistics_path
    s3.client.delete_object(Bucket=urlsplit(gone).netloc, Key=key_of(gone))
    present = s3.list(table.location())

    status = (await purge(purges, request_for(table, s3.properties))).status

    assert status.state is PurgeState.SUCCEEDED
    assert_counts_add_up(status)
    statistics = status.counts.of(Category.STATISTICS_FILES)
    assert (statistics.deleted, statistics.already_missing) == (status.planned.statistics_files - 1, 1)
    assert status.counts.total().deleted == len(present)
    assert s3.list(table.location()) == set()


async def test_planning_reads_each_file_with_one_get_and_no_head(
    catalog: SqlCatalog, purges: PurgeClient, s3: S3Store, stack: EmbeddedStack
) -> None:
    """Regression: PyArrow sent a HEAD before every read, doubling what a plan cost."""
    table = rich_table(catalog, ("faults",), "lean_reads")
    with s3_proxy(stack.ports.s3) as (port, faults):
        report = await purge(purges, request_for(table, through_proxy(s3.properties, port), dry_run=True))
    assert report.status.state is PurgeState.SUCCEEDED
    metadata_files = len(table.metadata.metadata_log) + 1
    manifest_lists = len({snapshot.manifest_list for snapshot in table.snapshots()})
    read = set(faults.reads)
    assert len(faults.reads) == len(read), "a file was read twice"
    assert len(read) >= metadata_files + manifest_lists
    # The one HEAD asks whether a version-hint.text exists.
    assert faults.requests["HEAD"] == 1
    assert faults.requests["GET"] == len(read)


async def test_a_slow_down_on_a_file_whose_name_holds_403_is_retried_not_denied(
    s3: S3Store, stack: EmbeddedStack
) -> None:
    """Regression: the file's UUID (…-4033-…) was in the error text, and "403" in it made a
    transient 503 a final "access denied", failing the chaos tier's purge."""
    location = "s3://warehouse/lake/plan_faults/named/metadata/00005-0c26a133-8835-4033-b4e7-ccebf6dfcaea.metadata.json"
    s3.client.put_object(Bucket="warehouse", Key=key_of(location), Body=b"{}")
    with s3_proxy(stack.ports.s3) as (port, faults):
        faults.failing_reads = {key_of(location)}
        io = load_file_io(through_proxy(s3.properties, port), location)
        reading = asyncio.create_task(asyncio.to_thread(read_bytes, io, location))
        while faults.failed_reads == 0 and not reading.done():
            await asyncio.sleep(0.01)
        faults.failing_reads = set()
        assert await asyncio.wait_for(reading, 60) == b"{}"
    assert faults.failed_reads >= 1


def _free_port_holding_403() -> int:
    holding_403: list[int] = [port for port in range(1024, 65536) if "403" in str(port)]
    for port in holding_403:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
            try:
                probe.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise AssertionError("no free port holding 403 on this machine")


def test_an_endpoint_whose_port_holds_403_is_unreachable_not_denied(s3: S3Store) -> None:
    """Regression: the endpoint's address was in the connection error's text, and a free port
    such as 40312 made "nobody listens" a final "access denied", failing CI's stuck-purge test."""
    location = "s3://warehouse/lake/plan_faults/port/metadata/00001.metadata.json"
    nobody = {**s3.properties, "s3.endpoint": f"http://127.0.0.1:{_free_port_holding_403()}"}
    with pytest.raises(OSError, match="Could not connect") as failed:
        read_bytes(load_file_io(nobody, location), location)
    assert not isinstance(failed.value, PermissionError)


def test_a_refusal_is_read_from_the_text_only_outside_addresses() -> None:
    location = "gs://bucket/t/metadata/00005-0c26a133-8835-4033-b4e7-ccebf6dfcaea.metadata.json"
    assert names_a_refusal("AWS Error ACCESS_DENIED during GetObject operation", location)
    assert names_a_refusal("GET failed with 403 Forbidden", location)
    assert names_a_refusal(f"error (403) reading {location}", location)
    assert not names_a_refusal(f"HTTP 503 reading {location}", location)
    assert not names_a_refusal('Could not connect to "http://127.0.0.1:40312/bucket/t"', location)
    assert not names_a_refusal("Failed to connect to 127.0.0.1 port 40312", location)
    assert not names_a_refusal("503 for https://store-403.example/bucket/x", location)
