"""A namespace purge's small tables purged in batches (`batch_tables`): the outcome a workflow per
table reaches (tables gone, protected ones kept, namespaces dropped, counts equal to the files
found beforehand), each table's purge findable by its id through the HTTP API, a table over the
batch's size handed back to a workflow of its own, and a batch retried after its worker died in
the middle answering for every table exactly once."""

from __future__ import annotations

import asyncio

import httpx
import pytest
from pyiceberg.catalog.sql import SqlCatalog
from temporalio.client import Client

from icepurge.api.clients.http_client import HttpPurgeClient
from icepurge.api.clients.temporal_client import PurgeClient
from icepurge.api.clients.temporal_namespace_client import namespace_request
from icepurge.contract import express_steps
from icepurge.contract.names import ERROR_LIVE_TABLE, ERROR_PROTECTED, PURGE_RANGE_BATCH_ACTIVITY
from icepurge.contract.namespace_status import NamespacePurgeState
from icepurge.contract.states import PurgeState
from icepurge.contract.status import PurgeReport
from icepurge.worker.settings import WorkerSettings
from tests.api_server import TOKENS, bearer
from tests.batch_records import batch_records
from tests.cli_runner import icepurge_over_api
from tests.conftest import LAKE_CATALOG
from tests.namespace_trees import flat_namespace, nested_tree
from tests.purge_helpers import activities_in_order, assert_counts_add_up, children_of
from tests.store import S3Store
from tests.tables import simple_table


async def _listed_as_the_namespace_purges_tables(
    api_url: str, purge_id: str, records: dict[str, PurgeReport]
) -> None:
    """Every batched table in the namespace purge's table listing, page by page (two tables a
    page: a page holds whole batches), with its state, counts and purge id; and the CLI's. A page
    larger than a batch holds as many tables as asked while more are left."""
    listed, token = [], None
    async with HttpPurgeClient(api_url, TOKENS["lake-dropper"][0]) as dropper:
        while True:
            page = await dropper.namespace_tables(purge_id, page_size=2, page_token=token)
            listed += page.items
            token = page.next_page_token
            if token is None:
                break
        sizes, token = [], None
        while True:
            page = await dropper.namespace_tables(purge_id, page_size=5, page_token=token)
            sizes.append(len(page.items))
            token = page.next_page_token
            if token is None:
                break
    assert sum(sizes) == len(records) and all(size >= 5 for size in sizes[:-1]), sizes
    by_id = {item.purge_id: item for item in listed}
    assert len(listed) == len(by_id) == len(records)
    for record in records.values():
        item, status = by_id[record.status.purge_id], record.status
        total = status.counts.total()
        assert (item.state, item.table, item.files_deleted, item.files_failed) == (
            status.state.value,
            status.table,
            total.deleted,
            total.failed,
        )
    assert ERROR_PROTECTED in (by_id[records["locked"].status.purge_id].reason or "")
    code, out, err = await icepurge_over_api(
        api_url, "purge", "tables", purge_id, "--limit", "1000", ICEPURGE_API_TOKEN=TOKENS["lake-dropper"][0]
    )
    assert code == 0, err
    assert all(record.status.purge_id in out for record in records.values()), out
    assert "more:" not in out


async def test_batches_reach_the_outcome_of_a_workflow_per_table_and_keep_each_tables_record(
    lake: SqlCatalog,
    purges: PurgeClient,
    s3: S3Store,
    worker_settings: WorkerSettings,
    api_url: str,
    temporal_client: Client,
) -> None:
    tree = nested_tree(lake, s3, "batched")
    purge_id = await purges.namespaces.start(
        namespace_request(
            LAKE_CATALOG,
            ["batched"],
            requested_by="pytest",
            recursive=True,
            max_concurrent_tables=8,
            batch_tables=4,
        )
    )
    status = (await purges.namespaces.wait(purge_id)).status
    assert status.state is NamespacePurgeState.SUCCEEDED, status
    assert (status.tables_total, status.tables_done, status.tables_skipped, status.tables_failed) == (
        6,
        5,
        1,
        0,
    )
    assert status.files.planned == status.files.deleted == tree.files
    assert status.namespaces_dropped == len(tree.emptied)
    for identifier, files in tree.purged.items():
        assert not lake.table_exists(identifier), identifier
        assert not any(s3.exists(uri) for uri in files), identifier
    for identifier, files in tree.kept.items():
        assert lake.table_exists(identifier), identifier
        assert all(s3.exists(uri) for uri in files), identifier
    # No workflow per table: two batches of the namespace purge's own.
    assert await children_of(purges, purge_id) == []
    assert (await activities_in_order(temporal_client, purge_id)).count(PURGE_RANGE_BATCH_ACTIVITY) == 2
    records = batch_records(s3, worker_settings.state_location, purge_id)
    assert set(records) == {
        identifier[-1] for identifier in (*tree.purged, *tree.kept) if identifier[-1] != "k1"
    }
    assert records["locked"].status.state is PurgeState.FAILED
    assert records["locked"].status.error_type == ERROR_PROTECTED
    done = [record.status for name, record in records.items() if name != "locked"]
    assert all(status.state is PurgeState.SUCCEEDED and status.dropped_at for status in done)
    for table_status in done:
        assert_counts_add_up(table_status)
    assert sum(table_status.counts.total().deleted for table_status in done) == tree.files
    # Each table's purge, by its id, as any purge is read: the HTTP API (and the CLI through it).
    async with httpx.AsyncClient(timeout=60) as http:
        for table_status in done:
            answer = await http.get(
                f"{api_url}/v1/purges/{table_status.purge_id}", headers=bearer("lake-dropper")
            )
            assert answer.status_code == 200, answer.text
            assert answer.json()["state"] == "SUCCEEDED"
            assert answer.json()["files_done"] == table_status.files_done
            report = await http.get(
                f"{api_url}/v1/purges/{table_status.purge_id}/report", headers=bearer("lake-dropper")
            )
            assert report.status_code == 200, report.text
            assert (report.json()["report_location"], report.json()["entries"]) == (
                table_status.report_location,
                [],
            )
        await _listed_as_the_namespace_purges_tables(api_url, purge_id, records)
        other = await http.get(f"{api_url}/v1/purges/{done[0].purge_id}", headers=bearer("a-full"))
        assert other.status_code == 403, other.text
        missing = await http.get(
            f"{api_url}/v1/purges/icepurge-no-such-purge", headers=bearer("lake-dropper")
        )
        assert missing.status_code == 404, missing.text


async def test_a_table_over_the_batch_size_gets_a_table_purge_of_its_own(
    lake: SqlCatalog,
    purges: PurgeClient,
    s3: S3Store,
    worker_settings: WorkerSettings,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    tree = flat_namespace(lake, s3, ("handback",), tables=3, appends=0)
    big = simple_table(lake, ("handback",), "big", appends=3)
    tree.purged[("handback", "big")] = s3.list(big.location())
    monkeypatch.setattr(express_steps, "EXPRESS_MAX_FILES", len(tree.purged[("handback", "t000")]))
    purge_id = await purges.namespaces.start(
        namespace_request(
            LAKE_CATALOG, ["handback"], requested_by="pytest", max_concurrent_tables=4, batch_tables=4
        )
    )
    status = (await purges.namespaces.wait(purge_id)).status
    assert (status.state, status.tables_done) == (NamespacePurgeState.SUCCEEDED, 4)
    assert status.files.planned == status.files.deleted == tree.files
    assert not any(s3.exists(uri) for files in tree.purged.values() for uri in files)
    children = await children_of(purges, purge_id)
    assert len(children) == 1
    child = await purges.status(children[0])
    assert (child.table, child.state) == ("big", PurgeState.SUCCEEDED)
    assert set(batch_records(s3, worker_settings.state_location, purge_id)) == {"t000", "t001", "t002"}


async def test_a_namespace_purge_with_options_batches_dont_take_keeps_a_workflow_per_table(
    lake: SqlCatalog, purges: PurgeClient, s3: S3Store, temporal_client: Client
) -> None:
    flat_namespace(lake, s3, ("rehearsed",), tables=2)
    purge_id = await purges.namespaces.start(
        namespace_request(
            LAKE_CATALOG, ["rehearsed"], requested_by="pytest", batch_tables=4, options={"dry_run": True}
        )
    )
    status = (await purges.namespaces.wait(purge_id)).status
    assert (status.state, status.tables_done) == (NamespacePurgeState.SUCCEEDED, 2)
    assert len(await children_of(purges, purge_id)) == 2
    assert PURGE_RANGE_BATCH_ACTIVITY not in await activities_in_order(temporal_client, purge_id)


async def test_a_batched_table_the_guard_refuses_is_dropped_and_keeps_its_files_and_the_others_go_on(
    lake: SqlCatalog, purges: PurgeClient, s3: S3Store, worker_settings: WorkerSettings
) -> None:
    tree = flat_namespace(lake, s3, ("guarded_batch",), tables=3)
    squatted = lake.load_table(("guarded_batch", "t001"))
    lake.create_namespace_if_not_exists(("squatters",))
    lake.create_table(("squatters", "inside"), schema=squatted.schema(), location=f"{squatted.location()}/x")
    kept = tree.purged.pop(("guarded_batch", "t001"))
    purge_id = await purges.namespaces.start(
        namespace_request(
            LAKE_CATALOG,
            ["guarded_batch"],
            requested_by="pytest",
            batch_tables=4,
            options={"overlap_scope": "catalog"},
        )
    )
    status = (await purges.namespaces.wait(purge_id)).status
    assert (status.state, status.tables_done, status.tables_failed) == (
        NamespacePurgeState.SUCCEEDED_WITH_ERRORS,
        2,
        1,
    )
    assert [failure.error_type for failure in status.failure_sample] == [ERROR_LIVE_TABLE]
    assert not lake.table_exists(("guarded_batch", "t001"))
    assert all(s3.exists(uri) for uri in kept)
    assert not any(s3.exists(uri) for files in tree.purged.values() for uri in files)
    assert status.files.deleted == tree.files
    refused = batch_records(s3, worker_settings.state_location, purge_id)["t001"].status
    assert (refused.state, refused.error_type, refused.files_done) == (PurgeState.FAILED, ERROR_LIVE_TABLE, 0)
    assert refused.dropped_at is not None and "squatters.inside" in (refused.last_error or "")


async def test_a_paused_batched_purge_signals_no_table_it_purges_in_a_batch_and_resumes(
    lake: SqlCatalog, purges: PurgeClient, s3: S3Store, temporal_client: Client
) -> None:
    """A control reaches the running table purges' workflows; a batch's tables have none."""
    tree = flat_namespace(lake, s3, ("paused_batch",), tables=4)
    purge_id = await purges.namespaces.start(
        namespace_request(
            LAKE_CATALOG,
            ["paused_batch"],
            requested_by="pytest",
            max_concurrent_tables=2,
            batch_tables=2,
            # Two requests a second: the first batch is still deleting when the pause comes.
            options={"bucket_requests_per_second": 2},
        )
    )
    while not (await purges.namespaces.status(purge_id)).tables_running:
        await asyncio.sleep(0.05)
    paused = await purges.namespaces.pause(purge_id)
    assert paused.paused and paused.tables_done < 4
    await purges.namespaces.resume(purge_id)
    status = (await purges.namespaces.wait(purge_id)).status
    assert (status.state, status.tables_done) == (NamespacePurgeState.SUCCEEDED, 4)
    assert status.files.deleted == tree.files
    # Every run's history: the test server suggests continuing as new every 60 events.
    async for run in temporal_client.list_workflows(f"WorkflowId = '{purge_id}'"):
        history = await temporal_client.get_workflow_handle(purge_id, run_id=run.run_id).fetch_history()
        assert not any(
            event.HasField("signal_external_workflow_execution_initiated_event_attributes")
            for event in history.events
        )
