"""Google Cloud Storage as a native store (fake-gcs-server, built by `make engines`): tables
PyIceberg writes at gs:// locations are purged with JSON API batch deletes, exact, through 503s
and resets, and swept, with the same parity and location guard as on S3 and Azure."""

from __future__ import annotations

import os
import time
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import pytest
from pyiceberg.catalog.sql import SqlCatalog

from icepurge.activities.plan.config_faults import is_configuration_fault
from icepurge.api.clients.temporal_client import PurgeClient
from icepurge.catalogs.locations import LocationGuard
from icepurge.contract.counts import Category
from icepurge.contract.states import PurgeState
from icepurge.devstack.fake_gcs import EMULATOR_TOKEN, FakeGcsEndpoint
from icepurge.devstack.free_ports import free_ports
from icepurge.devstack.s3_proxy import RandomFaults, s3_proxy
from icepurge.stores.gcs import GcsStore
from icepurge.stores.gcs_client import GcsCredentialsError
from icepurge.stores.gcs_deletes import GCS_BATCH, GcsBatchDeleter
from icepurge.stores.outcomes import DeleteTuning
from icepurge.stores.rate_budget import BucketRateLimits
from icepurge.stores.store import Deletes, StoreContext
from icepurge.worker.settings import WorkerSettings
from tests.gcs_objects import GcsObjects
from tests.purge_helpers import assert_counts_add_up, least_span_seconds, purge, request_for
from tests.store_parity import (
    assert_history_swept_and_guarded,
    assert_store_parity,
    assert_sweep_lists_and_deletes,
    listed_in_pages,
)
from tests.tables import many_files_table, rich_table, simple_table

pytestmark = pytest.mark.engines


def test_batch_deletes_take_100_objects_a_request_and_count_gone_ones_as_missing(
    fake_gcs: FakeGcsEndpoint, gcs_objects: GcsObjects
) -> None:
    folder = fake_gcs.location("lake", "batch/objects")
    uris = [f"{folder}/file-{index:04d}.parquet" for index in range(250)]
    with ThreadPoolExecutor(max_workers=4) as pool:
        for uri in uris[:230]:
            gcs_objects.put(uri)
        limits = BucketRateLimits(None)
        deleter = GcsBatchDeleter(
            gcs_objects.properties, Deletes(pool, limits, DeleteTuning(), concurrency=4)
        )
        first = deleter.delete(uris)
        again = deleter.delete(uris[:10])
        limits.close()
    assert sorted(first.deleted) == sorted(uris[:230])
    assert sorted(first.missing) == sorted(uris[230:])
    assert first.failed == []
    assert first.requests == -(-len(uris) // GCS_BATCH) == 3
    assert sorted(again.missing) == sorted(uris[:10])
    assert again.requests == 1
    assert gcs_objects.list(folder) == set()


def test_batch_deletes_wait_for_the_buckets_rate_budget(gcs_objects: GcsObjects) -> None:
    uris = [f"gs://lake/budget/file-{index:04d}.parquet" for index in range(5 * GCS_BATCH)]
    with ThreadPoolExecutor(max_workers=4) as pool:
        limits = BucketRateLimits(2.0)
        deleter = GcsBatchDeleter(
            gcs_objects.properties, Deletes(pool, limits, DeleteTuning(), concurrency=4)
        )
        started = time.monotonic()
        outcome = deleter.delete(uris)
        took = time.monotonic() - started
        limits.close()
    assert outcome.requests == 5 and len(outcome.missing) == len(uris)
    assert took >= least_span_seconds(5, 2.0)


def test_objects_are_read_written_headed_listed_and_deleted_one_at_a_time(
    fake_gcs: FakeGcsEndpoint, gcs_objects: GcsObjects
) -> None:
    store = GcsStore(StoreContext(gcs_objects.properties))
    folder = fake_gcs.location("lake", "objects/t")
    names = [f"{folder}/data/{letter} +%.parquet" for letter in "abcde"]
    for uri in names:
        store.write(uri, uri.encode())
    store.write(f"{folder}/metadata/v1.metadata.json", b"{}")
    assert store.read(names[2]) == names[2].encode()
    head = store.head(names[0])
    assert head is not None and head.size == len(names[0])
    assert store.head(f"{folder}/data/none.parquet") is None
    with pytest.raises(FileNotFoundError) as missing:
        store.read(f"{folder}/data/none.parquet")
    assert EMULATOR_TOKEN not in str(missing.value)

    # An empty segment names its own object on GCS; obstore can't name it (nor list a folder
    # holding it), the JSON API can.
    odd = f"{folder}/data//odd.parquet"
    store.write(odd, b"odd")
    assert store.read(odd) == b"odd"
    assert gcs_objects.exists(odd) and not gcs_objects.exists(f"{folder}/data/odd.parquet")
    odd_head = store.head(odd)
    assert odd_head is not None and odd_head.size == 3

    listed, pages = listed_in_pages(store, folder, limit=2)
    assert listed == sorted([*names, odd, f"{folder}/metadata/v1.metadata.json"])
    assert pages >= 4
    top = store.list_page(folder, None, limit=1000, flat=True)
    assert top.objects == [] and top.folders == [f"{folder}/data", f"{folder}/metadata"]

    store.delete(odd)
    store.delete(odd)
    assert not gcs_objects.exists(odd)


def test_a_process_forked_after_an_obstore_read_reads_through_the_json_api_and_does_not_hang(
    fake_gcs: FakeGcsEndpoint,
) -> None:
    store = GcsStore(StoreContext(fake_gcs.properties()))
    uri = fake_gcs.location("lake", "forked/a.json")
    store.write(uri, b"parent")
    assert store.read(uri) == b"parent"
    child = os.fork()
    if child == 0:
        # A forked child's obstore runtime hangs its first request; the JSON API answers.
        code = 1
        try:
            head = store.head(uri)
            code = 0 if store.read(uri) == b"parent" and head is not None and head.size == 6 else 2
        finally:
            os._exit(code)
    deadline = time.monotonic() + 60
    while (waited := os.waitpid(child, os.WNOHANG)) == (0, 0):
        if time.monotonic() > deadline:
            os.kill(child, 9)
            os.waitpid(child, 0)
            pytest.fail("the forked child's read did not end within 60 s")
        time.sleep(0.05)
    assert os.waitstatus_to_exitcode(waited[1]) == 0


def test_google_cloud_storage_without_a_token_says_what_to_set() -> None:
    store = GcsStore(StoreContext({}))
    with pytest.raises(GcsCredentialsError, match=r"set gcs\.oauth2\.token"):
        store.read("gs://lake/t/metadata/v1.metadata.json")


async def test_parity_on_gcs_deletes_exactly_the_drop_table_data_set(
    gcs_catalog: SqlCatalog, purges: PurgeClient, gcs_objects: GcsObjects
) -> None:
    table = rich_table(gcs_catalog, ("gcs_parity",), "strict")
    assert table.location().startswith("gs://")
    await assert_store_parity(purges, table, gcs_objects)


async def test_history_sweep_and_location_guard_on_gcs(
    gcs_catalog: SqlCatalog, purges: PurgeClient, gcs_objects: GcsObjects
) -> None:
    await assert_history_swept_and_guarded(purges, gcs_catalog, gcs_objects, "gcs_safety")


def test_the_sweep_lists_and_deletes_on_gcs(
    worker_settings: WorkerSettings, fake_gcs: FakeGcsEndpoint, gcs_objects: GcsObjects
) -> None:
    location = fake_gcs.location("lake", f"swept-{uuid.uuid4().hex[:8]}")
    assert_sweep_lists_and_deletes(worker_settings, location, gcs_objects)


async def test_a_purge_on_gcs_through_503s_and_resets_is_exact(
    gcs_catalog: SqlCatalog, purges: PurgeClient, gcs_objects: GcsObjects, fake_gcs: FakeGcsEndpoint
) -> None:
    table = many_files_table(gcs_catalog, ("gcs_faults",), "flaky", manifests=6, files=30)
    before = gcs_objects.list(table.location())
    with s3_proxy(fake_gcs.port) as (port, faults):
        faults.random_faults = RandomFaults(slow_down=0.1, reset_before=0.05, reset_after=0.05, seed=7)
        properties = fake_gcs.properties(f"http://127.0.0.1:{port}")
        report = await purge(purges, request_for(table, properties, history_sweep=False))
        injected = faults.random_faults.injected

    assert report.status.state is PurgeState.SUCCEEDED, report.status.last_error
    assert gcs_objects.list(table.location()) == set()
    assert injected["slow_down"] and injected["reset_before"] and injected["reset_after"]
    data = report.status.counts.of(Category.DATA_FILES)
    # A batch the store acted on before its answer was cut finds those objects gone when sent again.
    assert data.deleted + data.already_missing == 6 * 30
    assert len(before) == report.status.files_total
    # Batches of up to 100, sent again where a fault cut them: far fewer requests than objects.
    assert report.status.delete_requests < len(before) / 10
    assert_counts_add_up(report.status)


async def test_an_object_the_store_refuses_to_delete_is_a_failure_and_stays(
    gcs_catalog: SqlCatalog, purges: PurgeClient, gcs_objects: GcsObjects, fake_gcs: FakeGcsEndpoint
) -> None:
    table = simple_table(gcs_catalog, ("gcs_refusals",), "denied_object", appends=2)
    data_files = sorted(task.file.file_path for task in table.scan().plan_files())
    denied = data_files[0]
    with s3_proxy(fake_gcs.port) as (port, faults):
        faults.deny_keys_containing = denied.rsplit("/", 1)[1]
        report = await purge(purges, request_for(table, fake_gcs.properties(f"http://127.0.0.1:{port}")))

    status = report.status
    assert status.state is PurgeState.SUCCEEDED_WITH_ERRORS
    assert status.failures_total == 1
    assert status.failure_sample[0].path == denied
    assert status.failure_sample[0].error == "HTTP 403"
    remaining = gcs_objects.list(table.location())
    assert denied in remaining and table.metadata_location in remaining
    assert remaining.isdisjoint(data_files[1:])


def test_the_location_guard_knows_one_object_by_each_of_its_spellings() -> None:
    guard = LocationGuard(["gs://lake/warehouse/t"])
    assert guard.allows("gcs://lake/warehouse/t/data/a.parquet")
    assert guard.allows("gs://lake/warehouse/t//data/a.parquet")
    assert not guard.allows("gs://other/warehouse/t/data/a.parquet")
    assert not guard.allows("gs://lake/warehouse/t2/data/a.parquet")
    assert not guard.allows("s3://lake/warehouse/t/data/a.parquet")


def test_an_endpoint_nobody_answers_at_is_a_configuration_fault_and_names_no_token() -> None:
    closed = {"gcs.service.host": f"http://127.0.0.1:{free_ports(1)[0]}", "gcs.oauth2.token": "a-token"}
    store = GcsStore(StoreContext(closed, attempts=1))
    requests: list[Callable[[], object]] = [
        lambda: store.write("gs://lake/t/a.json", b"x"),
        lambda: store.head("gs://lake/t//a.json"),
    ]
    for request in requests:
        with pytest.raises(OSError) as failed:
            request()
        assert is_configuration_fault(failed.value), failed.value
        assert "a-token" not in str(failed.value)
