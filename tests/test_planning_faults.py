"""Planning never takes a transient fault for a missing file: reads are retried, nothing is
deleted while they fail; only a truly absent file is skipped, and then it is reported."""

from __future__ import annotations

import asyncio
from urllib.parse import urlsplit

from pyiceberg.catalog.sql import SqlCatalog

from activities.finalizer import PurgeReportObject
from api.client import PurgeClient
from devstack.s3_proxy import s3_proxy, through_proxy
from devstack.stack import EmbeddedStack
from tests.expected import drop_table_data_set, history_set
from tests.purge_helpers import assert_counts_add_up, purge, request_for
from tests.store import S3Store, key_of
from tests.tables import rich_table
from workflows.status import PurgeState


def _report(s3: S3Store, location: str) -> PurgeReportObject:
    parts = urlsplit(location)
    raw = s3.client.get_object(Bucket=parts.netloc, Key=parts.path.lstrip("/"))["Body"].read()
    return PurgeReportObject.model_validate_json(raw)


async def test_slow_down_on_older_metadata_is_retried_and_nothing_is_skipped(
    catalog: SqlCatalog, purges: PurgeClient, s3: S3Store, stack: EmbeddedStack
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
        while faults.failed_reads < 30:
            await asyncio.sleep(0.2)
        status = await purges.status(purge_id)
        assert status.state is PurgeState.PLANNING
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

    report = await purge(purges, request_for(table, s3.properties))

    status = report.status
    assert status.state is PurgeState.SUCCEEDED
    assert status.unreadable_files == 1
    assert status.report_location is not None
    unreadable = _report(s3, status.report_location).unreadable
    assert [(file.path, file.reason.value) for file in unreadable] == [(gone, "missing")]
    assert_counts_add_up(status)
