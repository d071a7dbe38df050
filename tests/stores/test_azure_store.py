"""Azure Blob Storage as a second real store (Azurite): tables PyIceberg writes at abfs://
locations are purged with Blob Batch deletes, with the same parity, location guard and
crash-resume promises as on S3. The whole module skips, saying why, where Node or Azurite is
missing."""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor

from azure.core.exceptions import ServiceRequestError
from pyiceberg.catalog.sql import SqlCatalog
from temporalio.client import Client

from icepurge.api.clients.temporal_client import PurgeClient
from icepurge.catalogs.locations import LocationGuard
from icepurge.contract.counts import Category
from icepurge.contract.states import PurgeState
from icepurge.devstack.azurite import AzuriteEndpoint
from icepurge.devstack.process import ServiceProcess
from icepurge.devstack.stack import EmbeddedStack
from icepurge.stores.azure_client import safe_message
from icepurge.stores.azure_deletes import AZURE_BATCH, AzureBatchDeleter
from icepurge.stores.outcomes import DeleteTuning
from icepurge.stores.rate_budget import BucketRateLimits
from icepurge.stores.store import Deletes
from tests.blob_store import BlobStore
from tests.purge_helpers import assert_counts_add_up, request_for
from tests.store_parity import assert_history_swept_and_guarded, assert_store_parity
from tests.tables import many_files_table, rich_table

QUEUE = "icepurge-azure-crash"


def test_batch_deletes_take_256_blobs_a_request_and_count_gone_ones_as_missing(
    azurite: AzuriteEndpoint, blobs: BlobStore
) -> None:
    folder = azurite.location("warehouse", "batch/blobs")
    uris = [f"{folder}/file-{index:04d}.parquet" for index in range(600)]
    with ThreadPoolExecutor(max_workers=4) as pool:
        for uri in uris[:550]:
            blobs.put(uri)
        limits = BucketRateLimits(None)
        deleter = AzureBatchDeleter(blobs.properties, Deletes(pool, limits, DeleteTuning(), concurrency=14))
        first = deleter.delete(uris)
        again = deleter.delete(uris[:10])
        limits.close()
    assert sorted(first.deleted) == sorted(uris[:550])
    assert sorted(first.missing) == sorted(uris[550:])
    assert first.failed == []
    assert first.requests == -(-len(uris) // AZURE_BATCH) == 3
    assert sorted(again.missing) == sorted(uris[:10])
    assert again.requests == 1
    assert blobs.list(folder) == set()


async def test_parity_on_azure_deletes_exactly_the_drop_table_data_set(
    azure_catalog: SqlCatalog, purges: PurgeClient, blobs: BlobStore
) -> None:
    await assert_store_parity(purges, rich_table(azure_catalog, ("azure_parity",), "strict"), blobs)


async def test_history_sweep_and_location_guard_on_azure(
    azure_catalog: SqlCatalog, purges: PurgeClient, blobs: BlobStore
) -> None:
    await assert_history_swept_and_guarded(purges, azure_catalog, blobs, "azure_safety")


def _worker(stack: EmbeddedStack, generation: int) -> ServiceProcess:
    worker = stack.worker_process(
        f"azure-crash-worker-{generation}", ICEPURGE_TASK_QUEUE=QUEUE, ICEPURGE_CHUNK_TARGET_FILES="40"
    )
    worker.start()
    return worker


async def _deleted_at_least(blobs: BlobStore, location: str, before: set[str], count: int) -> None:
    while len(before - await asyncio.to_thread(blobs.list, location)) < count:
        await asyncio.sleep(0.1)


async def test_killed_workers_resume_an_azure_purge_and_nothing_leaks(
    azure_catalog: SqlCatalog, temporal_client: Client, blobs: BlobStore, stack: EmbeddedStack
) -> None:
    table = many_files_table(azure_catalog, ("azure_crash",), "resume", manifests=12, files=20)
    before = blobs.list(table.location())
    data_files = 12 * 20
    purges = PurgeClient(temporal_client, QUEUE)
    worker = _worker(stack, 0)
    try:
        # One request a second: 40-file chunks, so the kills land mid-purge.
        purge_id = await purges.start(
            request_for(table, blobs.properties, chunk_window=1, bucket_requests_per_second=1.0)
        )
        for generation, gone in enumerate((60, 140), start=1):
            await asyncio.wait_for(_deleted_at_least(blobs, table.location(), before, gone), timeout=180)
            worker.kill()
            worker = _worker(stack, generation)
        report = await asyncio.wait_for(purges.wait(purge_id), timeout=300)
    finally:
        worker.stop()

    assert report.status.state is PurgeState.SUCCEEDED
    assert blobs.list(table.location()) == set()
    data = report.status.counts.of(Category.DATA_FILES)
    # A chunk whose batch reached the store as its worker died finds those blobs gone.
    assert data.deleted + data.already_missing == data_files
    assert data.already_missing <= 2 * 40
    assert_counts_add_up(report.status)
    secret = blobs.properties["adls.connection-string"].split("AccountKey=", 1)[1].split(";", 1)[0]
    for log in (stack.state_dir / "logs").glob("azure-crash-worker-*.log"):
        text = log.read_text()
        assert secret not in text
        # The SDK's per-request logging is off: it flooded the worker's log.
        assert "Request URL" not in text


def test_the_location_guard_knows_one_blob_by_each_of_its_spellings() -> None:
    guard = LocationGuard(["abfs://warehouse@acct.dfs.core.windows.net/lake/t"])
    assert guard.allows("abfss://warehouse@acct.dfs.core.windows.net/lake/t/data/a.parquet")
    assert guard.allows("wasbs://warehouse@acct.blob.core.windows.net/lake/t//data/a.parquet")
    assert not guard.allows("abfs://other@acct.dfs.core.windows.net/lake/t/data/a.parquet")
    assert not guard.allows("abfs://warehouse@elsewhere.dfs.core.windows.net/lake/t/data/a.parquet")
    assert not guard.allows("abfs://warehouse@acct.dfs.core.windows.net/lake/t2/data/a.parquet")


def test_an_sdk_error_quoting_a_sas_url_loses_its_signature() -> None:
    error = ServiceRequestError(
        "Max retries exceeded with url: /acct/c?comp=batch&sv=2024&sig=c2VjcmV0%3D&se=1"
    )
    assert "c2VjcmV0" not in safe_message(error)
    assert "sig=***" in safe_message(error)
