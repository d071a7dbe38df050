"""The Spark engine on local[2,4]: parity like the local engine, `auto` picking each engine at
its threshold, cancellation reaching the running Spark job, no secret in Spark's conf."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator, Iterator
from typing import TYPE_CHECKING, Any

import pytest
from pyiceberg.catalog.sql import SqlCatalog
from temporalio.client import Client

from icepurge.api.clients.errors import PurgeFailedError
from icepurge.api.clients.temporal_client import PurgeClient
from icepurge.contract.counts import Category
from icepurge.contract.names import ERROR_ENGINE_UNAVAILABLE
from icepurge.contract.states import PurgeState
from icepurge.devstack.s3_proxy import s3_proxy, through_proxy
from icepurge.devstack.stack import EmbeddedStack
from icepurge.worker.run import activity_pool, build_worker
from icepurge.worker.settings import WorkerSettings
from tests.blob_store import BlobStore
from tests.conftest import LAKE_CATALOG
from tests.distinct_check import purge_rewrite_heavy_table
from tests.expected import drop_table_data_set, history_set
from tests.purge_helpers import least_span_seconds, purge, request_for, status_when
from tests.store import S3Store
from tests.store_parity import assert_store_parity
from tests.tables import many_files_table, rich_table, simple_table
from tests.workers import in_process_worker

if TYPE_CHECKING:
    import pyarrow as pa

QUEUE = "icepurge-spark"
AUTO_THRESHOLD = 50
BATCH_FILES = 10


@pytest.fixture(scope="module")
async def spark_purges(
    temporal_client: Client, worker_settings: WorkerSettings
) -> AsyncIterator[PurgeClient]:
    async with in_process_worker(
        temporal_client,
        worker_settings,
        task_queue=QUEUE,
        spark_master="local[2,4]",
        spark_conf={"spark.ui.enabled": "false"},
        auto_spark_min_files=AUTO_THRESHOLD,
        # Small bulk requests, so a chunk of a few dozen files has several groups.
        delete_batch_files=BATCH_FILES,
    ) as client:
        yield client


async def test_spark_engine_deletes_the_parity_and_history_set(
    catalog: SqlCatalog, spark_purges: PurgeClient, s3: S3Store
) -> None:
    table = rich_table(catalog, ("spark",), "parity")
    expected = drop_table_data_set(table.io, table.metadata_location) | history_set(
        table.io, table.metadata_location
    )
    before = s3.list(table.location())

    report = await purge(spark_purges, request_for(table, s3.properties, engine="spark"))

    assert report.status.state is PurgeState.SUCCEEDED
    assert report.status.engine == "spark"
    assert s3.list(table.location()) == set()
    assert before == expected & before
    counts = report.status.counts
    assert counts.of(Category.POSITION_DELETE_FILES).deleted >= 1
    assert counts.of(Category.EQUALITY_DELETE_FILES).deleted >= 1


async def test_auto_picks_local_below_the_threshold_and_spark_from_it(
    catalog: SqlCatalog, spark_purges: PurgeClient, s3: S3Store
) -> None:
    small = many_files_table(catalog, ("spark",), "auto_small", manifests=1, files=AUTO_THRESHOLD - 1)
    large = many_files_table(catalog, ("spark",), "auto_large", manifests=1, files=AUTO_THRESHOLD)

    small_report = await purge(spark_purges, request_for(small, s3.properties))
    large_report = await purge(spark_purges, request_for(large, s3.properties))

    assert small_report.status.engine == "local"
    assert large_report.status.engine == "spark"
    assert large_report.status.counts.of(Category.DATA_FILES).deleted == AUTO_THRESHOLD
    assert s3.list(small.location()) == s3.list(large.location()) == set()


async def test_spark_requested_on_a_worker_without_spark_fails_at_once(
    catalog: SqlCatalog, purges: PurgeClient, s3: S3Store
) -> None:
    table = simple_table(catalog, ("spark",), "no_spark", appends=1)
    with pytest.raises(PurgeFailedError) as failed:
        await asyncio.wait_for(purge(purges, request_for(table, s3.properties, engine="spark")), timeout=60)
    assert failed.value.error_type == ERROR_ENGINE_UNAVAILABLE
    assert "ICEPURGE_SPARK_MASTER" in failed.value.reason
    assert s3.list(table.location())


async def test_cancelling_the_purge_stops_the_running_spark_job(
    catalog: SqlCatalog, spark_purges: PurgeClient, temporal_client: Client, s3: S3Store, stack: EmbeddedStack
) -> None:
    from pyspark.sql import SparkSession

    table = many_files_table(catalog, ("spark",), "cancelled", manifests=6, files=10)
    with s3_proxy(stack.ports.s3) as (port, faults):
        faults.delete_delay = 3.0
        properties = through_proxy(s3.properties, port)
        purge_id = await spark_purges.start(request_for(table, properties, engine="spark", concurrency=1))
        tracker = SparkSession.builder.getOrCreate().sparkContext.statusTracker()
        while not tracker.getActiveJobsIds():
            await asyncio.sleep(0.1)
        await temporal_client.get_workflow_handle(purge_id).cancel()
        with pytest.raises(PurgeFailedError, match="CANCELLED"):
            await asyncio.wait_for(spark_purges.wait(purge_id), timeout=60)
        # Killing a cancelled task's Python worker takes Spark a moment; "within seconds".
        await asyncio.wait_for(_no_active_jobs(tracker), timeout=15)
        # A cancelled task's Python worker is killed after spark.python.task.killTimeout (2 s).
        await asyncio.sleep(3)
        deletes_at_cancel = faults.delete_requests
        await asyncio.sleep(4)
        assert faults.delete_requests == deletes_at_cancel
        status = await spark_purges.status(purge_id)
    assert status.state is PurgeState.CANCELLED
    assert s3.list(table.location())


async def test_a_task_that_fails_once_is_retried_without_double_counting(
    catalog: SqlCatalog,
    temporal_client: Client,
    worker_settings: WorkerSettings,
    s3: S3Store,
    stack: EmbeddedStack,
) -> None:
    """The task's first checkpoint write (after its files are deleted) fails: the task fails,
    Spark retries it, and only the successful attempt's row counts."""
    manifests, files = 3, 10
    table = many_files_table(catalog, ("spark",), "task_retry", manifests=manifests, files=files)
    with s3_proxy(stack.ports.s3) as (port, faults):
        faults.fail_puts_containing = "-tasks/"
        faults.fail_puts_left = 4  # more than the state store's 3 attempts at one PUT
        proxied = through_proxy(s3.properties, port)
        settings = worker_settings.model_copy(
            update={
                "task_queue": "icepurge-spark-retry",
                "spark_master": "local[2,4]",
                "state_io_properties": proxied,
            }
        )
        with activity_pool(settings) as pool:
            async with build_worker(temporal_client, settings, pool):
                client = PurgeClient(temporal_client, settings.task_queue)
                # One chunk at a time, so the failing PUTs all fall on one task's checkpoint.
                report = await purge(client, request_for(table, proxied, engine="spark", chunk_window=1))
    assert faults.fail_puts_left == 0
    # The failed attempt had deleted its files already: the retry sent them again.
    assert len(faults.deleted_keys) > len(set(faults.deleted_keys))
    assert report.status.state is PurgeState.SUCCEEDED
    assert report.status.counts.of(Category.DATA_FILES).deleted == manifests * files
    assert s3.list(table.location()) == set()


@pytest.mark.parametrize("engine", ["spark", "local"])
async def test_status_moves_during_a_long_chunk(
    engine: str, catalog: SqlCatalog, spark_purges: PurgeClient, s3: S3Store, stack: EmbeddedStack
) -> None:
    """One chunk of three groups whose deletes each take seconds: status shows the first
    group's files before the chunk ends, and the result doesn't count them twice."""
    files = 3 * BATCH_FILES
    table = many_files_table(catalog, ("spark",), f"mid_chunk_{engine}", manifests=1, files=files)
    with s3_proxy(stack.ports.s3) as (port, faults):
        faults.delete_delay = 5.0
        properties = through_proxy(s3.properties, port)
        # One chunk: with a window of two, a plan that ends before any chunk is cut splits in two.
        request = request_for(
            table, properties, engine=engine, concurrency=1, chunk_window=1, express_lane=False
        )
        purge_id = await spark_purges.start(request)
        mid_chunk = await asyncio.wait_for(
            status_when(spark_purges, purge_id, lambda status: status.files_done >= BATCH_FILES),
            timeout=60,
        )
        report = await spark_purges.wait(purge_id)
    assert mid_chunk.state is PurgeState.DELETING
    assert mid_chunk.chunks_done == 0
    assert BATCH_FILES <= mid_chunk.counts.of(Category.DATA_FILES).deleted < files
    assert report.status.counts.of(Category.DATA_FILES).deleted == files
    assert report.status.files_done == report.status.files_total
    assert s3.list(table.location()) == set()


async def test_spark_tasks_share_the_bucket_budget(
    catalog: SqlCatalog, spark_purges: PurgeClient, s3: S3Store, stack: EmbeddedStack
) -> None:
    budget = 2.0
    table = many_files_table(catalog, ("spark",), "budget", manifests=12, files=10)
    with s3_proxy(stack.ports.s3) as (port, faults):
        faults.transient_failures_left = 2
        properties = through_proxy(s3.properties, port)
        request = request_for(table, properties, engine="spark", bucket_requests_per_second=budget)
        report = await purge(spark_purges, request)
        times = sorted(faults.delete_times)
    assert report.status.state is PurgeState.SUCCEEDED
    assert report.status.throttled_requests == 2
    assert len(times) == report.status.delete_requests >= 8
    assert times[-1] - times[0] >= least_span_seconds(len(times), budget)


async def _no_active_jobs(tracker: Any) -> None:
    while tracker.getActiveJobsIds():
        await asyncio.sleep(0.2)


async def test_spark_engine_purges_an_azure_table_with_batch_deletes(
    azure_catalog: SqlCatalog, spark_purges: PurgeClient, blobs: BlobStore
) -> None:
    table = rich_table(azure_catalog, ("azure_spark",), "strict")
    await assert_store_parity(spark_purges, table, blobs, engine="spark")


def test_no_secret_in_spark_conf(spark_purges: PurgeClient, s3: S3Store) -> None:
    from pyspark.sql import SparkSession

    conf = SparkSession.builder.getOrCreate().sparkContext.getConf().getAll()
    secret = s3.properties["s3.secret-access-key"]
    assert all(secret not in f"{key}={value}" for key, value in conf)
    assert dict(conf)["spark.redaction.regex"].startswith("(?i)secret")


async def test_spark_engine_counts_and_sends_each_distinct_file_once(
    catalog: SqlCatalog, spark_purges: PurgeClient, s3: S3Store, stack: EmbeddedStack
) -> None:
    status = await purge_rewrite_heavy_table(spark_purges, catalog, s3, stack, "spark", engine="spark")
    assert status.engine == "spark"


async def test_a_spark_sweep_lists_the_location_in_parallel_parts(
    lake: SqlCatalog, spark_purges: PurgeClient, s3: S3Store
) -> None:
    table = simple_table(lake, ("spark_sweep",), "t", appends=2)
    names = ["stray.txt", "data/aborted-1.parquet", "data/c=x/aborted-2.parquet", "metadata/torn.json"]
    orphans = {f"{table.location()}/{name}" for name in names}
    for uri in orphans:
        s3.put(uri)
    # Listing times have one-second resolution: the orphans must predate the purge's start.
    time.sleep(1.2)
    purge_id = await spark_purges.purge_by_name(
        LAKE_CATALOG,
        ["spark_sweep"],
        "t",
        requested_by="pytest",
        options={"engine": "spark", "sweep_location": True, "sweep_grace_seconds": 0},
    )
    status = (await spark_purges.wait(purge_id)).status
    sweep = status.sweep
    assert status.engine == "spark" and sweep is not None and sweep.applied, sweep
    # The location's own level, data/ and metadata/: three Spark tasks.
    assert (sweep.swept, sweep.failed, sweep.listings) == (len(orphans), 0, 3)
    assert "3 parallel Spark tasks" in sweep.detail
    assert s3.list(table.location()) == set()
    assert sweep.listing_location is not None
    listed = {uri for page in s3.list(sweep.listing_location) for uri in json.loads(s3.read(page))["objects"]}
    assert listed == orphans


async def test_spark_python_workers_start_with_the_task_code_imported(spark_purges: PurgeClient) -> None:
    """Regression: a fresh Python worker (Spark stops idle ones after a minute) imported the task
    code, PyIceberg's PyArrow FileIO included, inside a purge's first tasks."""
    from pyspark.sql import SparkSession

    def probe(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        import os
        import sys
        from pathlib import Path

        import pyarrow as pa

        parent = Path(f"/proc/{os.getppid()}/cmdline").read_text().replace("\0", " ")
        inherited = "icepurge.activities.delete.spark_engine" in sys.modules
        for _ in batches:
            yield pa.RecordBatch.from_pydict({"daemon": [parent], "inherited": [inherited]})

    spark = SparkSession.builder.getOrCreate()
    rows = spark.range(0, 2, 1, 2).mapInArrow(probe, "daemon string, inherited boolean").collect()
    assert all("icepurge.worker.spark_daemon" in row["daemon"] for row in rows), rows
    assert all(row["inherited"] for row in rows)
