"""Transient store faults are retried; per-file failures that outlive retries end the purge
SUCCEEDED_WITH_ERRORS, keep what a re-run needs, and a re-run finishes the job."""

from __future__ import annotations

from pyiceberg.catalog.sql import SqlCatalog

from icepurge.activities.finalize.finalizer import PurgeReportObject
from icepurge.api.clients.temporal_client import PurgeClient
from icepurge.contract.counts import Category, SkipReason
from icepurge.contract.states import PurgeState
from icepurge.devstack.s3_proxy import s3_proxy, through_proxy
from icepurge.devstack.stack import EmbeddedStack
from tests.purge_helpers import purge, request_for
from tests.store import S3Store
from tests.tables import simple_table


async def test_slowdown_responses_are_retried_and_counted_nowhere_as_failures(
    catalog: SqlCatalog, purges: PurgeClient, s3: S3Store, stack: EmbeddedStack
) -> None:
    table = simple_table(catalog, ("faults",), "throttled")
    with s3_proxy(stack.ports.s3) as (port, faults):
        faults.transient_failures_left = 2
        properties = through_proxy(s3.properties, port)
        report = await purge(purges, request_for(table, properties))
    assert faults.throttled == 2
    assert report.status.state is PurgeState.SUCCEEDED
    assert report.status.counts.total().failed == 0
    assert s3.list(table.location()) == set()


async def test_a_file_that_cannot_be_deleted_is_listed_and_a_rerun_finishes(
    catalog: SqlCatalog, purges: PurgeClient, s3: S3Store, stack: EmbeddedStack
) -> None:
    table = simple_table(catalog, ("faults",), "stuck", appends=3)
    stuck = sorted(task.file.file_path for task in table.scan().plan_files())[0]
    with s3_proxy(stack.ports.s3) as (port, faults):
        faults.fail_keys_containing = stuck.rsplit("/", 1)[1]
        properties = through_proxy(s3.properties, port)
        report = await purge(purges, request_for(table, properties))

    status = report.status
    assert status.state is PurgeState.SUCCEEDED_WITH_ERRORS
    assert status.failures_total >= 1
    assert stuck in {failure.path for failure in status.failure_sample}
    assert all("SlowDown" in failure.error for failure in status.failure_sample)
    assert s3.exists(stuck)
    # The manifest that lists the stuck file and the metadata chain stay for the re-run.
    assert status.counts.of(Category.MANIFESTS).skipped[SkipReason.KEPT_FOR_RETRY] >= 1
    assert s3.exists(table.metadata_location)
    assert report.status.report_location is not None
    bucket, key = report.status.report_location.removeprefix("s3://").split("/", 1)
    saved = PurgeReportObject.model_validate_json(s3.client.get_object(Bucket=bucket, Key=key)["Body"].read())
    assert stuck in {failure.path for failure in saved.failures}
    assert len(saved.failures) == status.failures_total

    # Starting the same request again returns this purge as it ended; a re-run is explicit.
    assert await purges.start(request_for(table, s3.properties)) == status.purge_id
    assert (await purges.status(status.purge_id)).state is PurgeState.SUCCEEDED_WITH_ERRORS
    left = s3.list(table.location())
    await purges.rerun(status.purge_id, file_io_properties=s3.properties)
    rerun = await purges.wait(status.purge_id)
    assert rerun.status.state is PurgeState.SUCCEEDED
    assert s3.list(table.location()) == set()
    # What the first run deleted is already gone: the re-run counts only what it deleted itself.
    total = rerun.status.counts.total()
    assert total.deleted == len(left), (total, len(left))
    assert total.already_missing == rerun.status.planned.files - len(left)
