"""Namespace purges against the real SQLite catalog the workers know: a nested tree with a dotted
and a unicode level, a protected table and a protected sub-namespace; every window size reaching
the same outcome; counts across the table purges equal to the sum of theirs and to the files
found in the store beforehand."""

from __future__ import annotations

from datetime import datetime, timedelta
from functools import partial

import pytest
from pyiceberg.catalog.sql import SqlCatalog
from temporalio.client import Client, WorkflowHistory
from temporalio.converter import decode_typed_search_attributes

from icepurge.api.clients.errors import PurgeFailedError
from icepurge.api.clients.temporal_client import PurgeClient
from icepurge.api.clients.temporal_namespace_client import namespace_request
from icepurge.contract.events import EventKind, PurgeKind
from icepurge.contract.names import (
    ERROR_NAMESPACE_NOT_FOUND,
    ERROR_PROTECTED,
    EVENT_SIGNAL,
    PROTECTED_PROPERTY,
)
from icepurge.contract.namespace_status import NamespacePurgeState, NamespacePurgeStatus
from icepurge.contract.search_attributes import FILES_DELETED, STATE
from icepurge.contract.states import PurgeState
from icepurge.contract.validation import InvalidPurgeRequestError
from icepurge.devstack.stack import EmbeddedStack
from icepurge.worker.settings import WorkerSettings
from icepurge.workflows.namespace.purge_namespace import PROGRESS_ATTRIBUTES_SECONDS
from tests.batch_records import batch_records
from tests.catalog_drops import other_engines_entry
from tests.conftest import ATTIC_CATALOG, LAKE_CATALOG, LISTENER_QUEUE
from tests.listener_workflow import EventListener
from tests.namespace_trees import Tree, flat_namespace, nested_tree
from tests.purge_helpers import children_of, eventually
from tests.store import S3Store
from tests.tables import simple_table


async def _assert_outcome(
    purges: PurgeClient, lake: SqlCatalog, s3: S3Store, tree: Tree, status: NamespacePurgeStatus
) -> None:
    assert status.state is NamespacePurgeState.SUCCEEDED, status
    for identifier, files in tree.purged.items():
        assert not lake.table_exists(identifier), identifier
        assert files and not any(s3.exists(uri) for uri in files), identifier
    for identifier, files in tree.kept.items():
        assert lake.table_exists(identifier), identifier
        assert all(s3.exists(uri) for uri in files), identifier
    for namespace in tree.emptied:
        assert not lake.namespace_exists(namespace), namespace
    for namespace in tree.staying:
        assert lake.namespace_exists(namespace), namespace
    # One table purge per table found, each a child listed under the namespace purge.
    children = await children_of(purges, status.purge_id)
    assert len(children) == len(set(children)) == len(tree.purged) + 1
    reports = [await purges.status(child) for child in children]
    succeeded = [report for report in reports if report.state is PurgeState.SUCCEEDED]
    assert {(*report.namespace, report.table) for report in succeeded} <= {
        tuple(".".join(identifier).split(".")) for identifier in tree.purged
    }
    assert len(succeeded) == len(tree.purged)
    assert status.files.planned == sum(report.files_total for report in succeeded) == tree.files
    assert status.files.deleted == sum(report.counts.total().deleted for report in succeeded) == tree.files
    assert status.files.failed == 0


@pytest.mark.parametrize("window", [1, 8])
async def test_a_recursive_namespace_purge_drops_and_purges_every_unprotected_table(
    lake: SqlCatalog, purges: PurgeClient, s3: S3Store, window: int
) -> None:
    tree = nested_tree(lake, s3, f"tree{window}")
    purge_id = await purges.namespaces.start(
        namespace_request(
            LAKE_CATALOG,
            list(tree.root),
            requested_by="pytest",
            recursive=True,
            max_concurrent_tables=window,
            batch_tables=0,
        )
    )
    status = (await purges.namespaces.wait(purge_id)).status
    await _assert_outcome(purges, lake, s3, tree, status)
    assert (status.tables_total, status.tables_done, status.tables_skipped, status.tables_failed) == (
        6,
        5,
        1,
        0,
    )
    assert status.namespaces_dropped == len(tree.emptied)
    skipped = {(entry.kind.value, entry.name.split(".")[-1], entry.reason) for entry in status.skipped_sample}
    assert ("table", "locked", "protected") in skipped
    assert ("namespace", "keep", "protected") in skipped
    kept_reasons = {
        entry.name: entry.reason for entry in status.skipped_sample if entry.reason.startswith("still")
    }
    assert "locked" in kept_reasons[f"{LAKE_CATALOG}.tree{window}.a"]
    assert status.run_count >= 1 and status.tables_running == 0 and status.running == []


async def test_a_table_purge_signals_its_namespace_purge_nothing_it_learns_by_itself(
    lake: SqlCatalog, purges: PurgeClient, s3: S3Store, temporal_client: Client
) -> None:
    """The parent knows a table purge's start and its report from the child workflow itself: a
    signal for either cost its workflow, whose tasks run one at a time, a task per table."""
    tree = flat_namespace(lake, s3, ("quiet",), tables=3)
    purge_id = await purges.namespaces.start(
        namespace_request(LAKE_CATALOG, ["quiet"], requested_by="pytest", batch_tables=0)
    )
    status = (await purges.namespaces.wait(purge_id)).status
    assert (status.state, status.tables_done) == (NamespacePurgeState.SUCCEEDED, 3)
    assert status.files.planned == status.files.deleted == tree.files
    assert not any(s3.exists(uri) for files in tree.purged.values() for uri in files)
    parent = await temporal_client.get_workflow_handle(purge_id).fetch_history()
    signalled = [
        event
        for event in parent.events
        if event.HasField("workflow_execution_signaled_event_attributes")
        and event.workflow_execution_signaled_event_attributes.signal_name == EVENT_SIGNAL
    ]
    assert signalled == []
    children = await children_of(purges, purge_id)
    assert len(children) == 3
    for child in children:
        assert (await purges.status(child)).state is PurgeState.SUCCEEDED
        history = await temporal_client.get_workflow_handle(child).fetch_history()
        assert not any(
            event.HasField("signal_external_workflow_execution_initiated_event_attributes")
            for event in history.events
        )


async def test_a_dry_run_plans_every_table_and_drops_nothing(
    lake: SqlCatalog, purges: PurgeClient, s3: S3Store
) -> None:
    tree = nested_tree(lake, s3, "rehearsal")
    purge_id = await purges.namespaces.start(
        namespace_request(
            LAKE_CATALOG, ["rehearsal"], requested_by="pytest", recursive=True, options={"dry_run": True}
        )
    )
    assert purge_id.endswith("-dry-run")
    status = (await purges.namespaces.wait(purge_id)).status
    assert status.state is NamespacePurgeState.SUCCEEDED and status.dry_run
    assert status.files.planned == tree.files and status.files.deleted == 0
    assert status.tables_done == len(tree.purged)
    # What the real run drops, said and not done.
    assert status.namespaces_dropped == len(tree.emptied)
    kept = {entry.name: entry.reason for entry in status.skipped_sample}
    assert kept["lake.rehearsal.a"] == "would still hold rehearsal.a.locked"
    for identifier, files in {**tree.purged, **tree.kept}.items():
        assert lake.table_exists(identifier)
        assert all(s3.exists(uri) for uri in files)
    for namespace in tree.emptied + tree.staying:
        assert lake.namespace_exists(namespace)


async def test_bad_namespace_purges_are_refused_with_the_reason(
    lake: SqlCatalog, purges: PurgeClient
) -> None:
    with pytest.raises(InvalidPurgeRequestError, match="confirm"):
        namespace_request(LAKE_CATALOG, [], requested_by="pytest")
    with pytest.raises(InvalidPurgeRequestError, match="max_concurrent_tables"):
        namespace_request(LAKE_CATALOG, ["x"], requested_by="pytest", max_concurrent_tables=0)
    missing = await purges.namespaces.start(
        namespace_request(LAKE_CATALOG, ["no_such_ns"], requested_by="pytest")
    )
    with pytest.raises(PurgeFailedError) as failed:
        await purges.namespaces.wait(missing)
    assert failed.value.error_type == ERROR_NAMESPACE_NOT_FOUND
    # A namespace of this test's own: tests/workflows/test_purge_by_name.py protects a "vault" of its own,
    # and both may run in one process, in either order.
    lake.create_namespace(("strongroom",), {PROTECTED_PROPERTY: "true"})
    lake.create_namespace(("strongroom", "inner"))
    refused = await purges.namespaces.start(
        namespace_request(LAKE_CATALOG, ["strongroom", "inner"], requested_by="pytest")
    )
    with pytest.raises(PurgeFailedError) as protected:
        await purges.namespaces.wait(refused)
    assert protected.value.error_type == ERROR_PROTECTED
    assert "namespace strongroom" in protected.value.reason
    assert lake.namespace_exists(("strongroom", "inner"))


# Enough for several continue-as-new runs with 16 tables in flight.
WIDE_TABLES = 120


@pytest.mark.usefixtures("listener")
@pytest.mark.parametrize(
    ("batch_tables", "window"), [(0, 16), (4, 2)], ids=["a workflow per table", "batches of 4"]
)
async def test_a_hundred_and_twenty_tables_cross_several_runs_with_exact_counts(
    lake: SqlCatalog,
    purges: PurgeClient,
    s3: S3Store,
    temporal_client: Client,
    worker_settings: WorkerSettings,
    batch_tables: int,
    window: int,
) -> None:
    namespace = f"wide{batch_tables}"
    tree = flat_namespace(lake, s3, (namespace,), WIDE_TABLES, appends=0)
    listening = await temporal_client.start_workflow(
        EventListener.run, id=f"listener-{namespace}", task_queue=LISTENER_QUEUE
    )
    purge_id = await purges.namespaces.start(
        namespace_request(
            LAKE_CATALOG,
            [namespace],
            requested_by="pytest",
            max_concurrent_tables=window,
            batch_tables=batch_tables,
            notify_workflow_id=f"listener-{namespace}",
            options={"progress_event_seconds": 1},
        )
    )
    report = await purges.namespaces.wait(purge_id)
    status = report.status
    print(f"\n{WIDE_TABLES} tables in {report.duration_seconds:.0f} s over {status.run_count} runs")
    assert status.state is NamespacePurgeState.SUCCEEDED
    # The test server suggests continue-as-new at 60 history events.
    assert status.run_count >= 4, status.run_count
    assert (status.tables_total, status.tables_done, status.tables_failed) == (WIDE_TABLES, WIDE_TABLES, 0)
    assert status.files.planned == status.files.deleted == tree.files
    assert all(not s3.exists(uri) for files in tree.purged.values() for uri in files)
    assert not lake.namespace_exists((namespace,))
    # One purge per table: a workflow each, or a record each that its batch kept.
    children = await children_of(purges, purge_id)
    if batch_tables:
        assert children == []
        records = batch_records(s3, worker_settings.state_location, purge_id)
        assert len(records) == WIDE_TABLES
        assert sum(record.status.files_done for record in records.values()) == tree.files
    else:
        assert len(children) == len(set(children)) == WIDE_TABLES
    # The namespace purge's own events, in order across its runs: started, progress, completed.
    events = await listening.result()
    assert [event.sequence for event in events] == list(range(len(events)))
    assert {event.purge_kind for event in events} == {PurgeKind.NAMESPACE}
    assert [events[0].kind, events[-1].kind] == [EventKind.STARTED, EventKind.COMPLETED]
    assert {event.kind for event in events[1:-1]} == {EventKind.PROGRESS}
    assert len({event.run_id for event in events}) > 1
    final = events[-1].tables
    assert final is not None and (final.total, final.done, final.namespaces_dropped) == (
        WIDE_TABLES,
        WIDE_TABLES,
        1,
    )
    assert events[-1].files_deleted == tree.files


async def test_cancel_stops_the_running_table_purges_and_starts_no_more(
    lake: SqlCatalog, purges: PurgeClient, s3: S3Store
) -> None:
    tree = flat_namespace(lake, s3, ("halted",), 6)
    # Soft-deleted table purges wait SCHEDULED: they are surely running when the cancel comes.
    purge_id = await purges.namespaces.start(
        namespace_request(
            LAKE_CATALOG,
            ["halted"],
            requested_by="pytest",
            max_concurrent_tables=2,
            batch_tables=0,
            options={"purge_after_seconds": 3600},
        )
    )
    running = await eventually(
        partial(purges.namespaces.status, purge_id),
        lambda status: [table.state for table in status.running] == ["SCHEDULED"] * 2,
    )
    await purges.cancel(purge_id)
    with pytest.raises(PurgeFailedError) as cancelled:
        await purges.namespaces.wait(purge_id)
    assert cancelled.value.state == "CANCELLED"
    status = await purges.namespaces.status(purge_id)
    assert status.state is NamespacePurgeState.CANCELLED
    assert (status.tables_cancelled, status.tables_running, status.tables_done) == (2, 0, 0)
    children = await children_of(purges, purge_id)
    assert sorted(children) == sorted(table.purge_id for table in running.running)
    for child in children:
        assert (await purges.status(child)).state is PurgeState.CANCELLED
    # Every file is still there; the tables never reached are still in the catalog.
    assert all(s3.exists(uri) for files in tree.purged.values() for uri in files)
    reached = {table.table for table in running.running}
    for identifier in tree.purged:
        assert lake.table_exists(identifier) is (".".join((LAKE_CATALOG, *identifier)) not in reached)


async def test_a_whole_catalog_purge_needs_its_name_and_empties_the_catalog(
    stack: EmbeddedStack, purges: PurgeClient, s3: S3Store
) -> None:
    attic = stack.catalog(ATTIC_CATALOG)
    tree = nested_tree(attic, s3, "old")
    flat = flat_namespace(attic, s3, ("misc",), 2)
    with pytest.raises(InvalidPurgeRequestError, match="confirm"):
        namespace_request(ATTIC_CATALOG, [], requested_by="pytest", confirm=LAKE_CATALOG)
    purge_id = await purges.namespaces.start(
        namespace_request(ATTIC_CATALOG, [], requested_by="pytest", confirm=ATTIC_CATALOG)
    )
    status = (await purges.namespaces.wait(purge_id)).status
    assert status.state is NamespacePurgeState.SUCCEEDED and status.recursive
    assert (status.tables_total, status.tables_done, status.tables_skipped) == (8, 7, 1)
    assert status.files.deleted == tree.files + flat.files
    # What stays: the levels holding the protected table and the protected namespace.
    assert set(attic.list_namespaces()) == {("old",)}
    assert all(attic.table_exists(identifier) for identifier in tree.kept)


async def test_a_namespace_holding_another_engines_entries_stays_and_says_what_it_holds(
    lake: SqlCatalog, purges: PurgeClient, s3: S3Store
) -> None:
    """PyIceberg's SQL catalog lists neither views nor other kinds; its drop_namespace would drop
    the namespace's entry from under them."""
    table = simple_table(lake, ("viewed",), "t", appends=1)
    files = s3.list(table.location())
    lake.update_namespace_properties(("viewed",), updates={"owner": "analytics"})
    other_engines_entry(lake, "viewed", "v", "VIEW")
    lake.create_namespace(("viewed", "indexed"), {"owner": "search"})
    other_engines_entry(lake, "viewed.indexed", "i1", "INDEX")
    purge_id = await purges.namespaces.start(
        namespace_request(LAKE_CATALOG, ["viewed"], requested_by="pytest", recursive=True)
    )
    status = (await purges.namespaces.wait(purge_id)).status
    assert status.state is NamespacePurgeState.SUCCEEDED, status
    assert (status.tables_total, status.tables_done, status.namespaces_dropped) == (1, 1, 0)
    assert not lake.table_exists(("viewed", "t")) and not any(s3.exists(uri) for uri in files)
    skipped = {(entry.kind.value, entry.name, entry.reason) for entry in status.skipped_sample}
    assert ("view", f"{LAKE_CATALOG}.viewed.v", "not_iceberg_table") in skipped
    assert ("entry", f"{LAKE_CATALOG}.viewed.indexed.i1", "not_iceberg_table (index)") in skipped
    assert ("namespace", f"{LAKE_CATALOG}.viewed.indexed", "still holds index viewed.indexed.i1") in skipped
    kept = {entry.name: entry.reason for entry in status.skipped_sample if entry.kind.value == "namespace"}
    assert kept[f"{LAKE_CATALOG}.viewed"] == "still holds view viewed.v, namespace viewed.indexed"
    # Both namespaces and their properties are still there.
    assert lake.load_namespace_properties(("viewed",))["owner"] == "analytics"
    assert lake.load_namespace_properties(("viewed", "indexed"))["owner"] == "search"


INTERVAL = timedelta(seconds=PROGRESS_ATTRIBUTES_SECONDS)


async def _runs(client: Client, purge_id: str) -> list[WorkflowHistory]:
    """Each run's history, oldest first."""
    runs = [run async for run in client.list_workflows(f"WorkflowId = '{purge_id}'")]
    ordered = sorted(runs, key=lambda run: run.start_time)
    return [await client.get_workflow_handle(purge_id, run_id=run.run_id).fetch_history() for run in ordered]


def _upserts(history: WorkflowHistory) -> list[tuple[datetime, int, str | None, int | None]]:
    """Each upsert of the purge's state and counts in a run: when, in which workflow task, the
    state it set and the files deleted (a patch's own upsert sets neither)."""
    found = []
    for event in history.events:
        if event.HasField("upsert_workflow_search_attributes_event_attributes"):
            upsert = event.upsert_workflow_search_attributes_event_attributes
            attributes = decode_typed_search_attributes(upsert.search_attributes)
            if attributes.get(STATE) is not None:
                found.append(
                    (
                        event.event_time.ToDatetime(),
                        upsert.workflow_task_completed_event_id,
                        attributes.get(STATE),
                        attributes.get(FILES_DELETED),
                    )
                )
    return found


@pytest.mark.parametrize("batch_tables", [0, 2])
async def test_the_search_attributes_follow_the_tables_at_most_once_an_interval_and_end_exact(
    lake: SqlCatalog, purges: PurgeClient, s3: S3Store, temporal_client: Client, batch_tables: int
) -> None:
    """Each round of a flat purge (and each table purge's event) used to upsert the purge's search
    attributes: a visibility write and a history event each. Now a state change upserts at once,
    progress at most once an interval, and the last upsert holds the final state and counts. Five
    tables, one at a time: five rounds (three batches), well within the interval."""
    namespace = f"indexed{batch_tables}"
    tree = flat_namespace(lake, s3, (namespace,), 5, appends=0)
    purge_id = await purges.namespaces.start(
        namespace_request(
            LAKE_CATALOG,
            [namespace],
            requested_by="pytest",
            max_concurrent_tables=1,
            batch_tables=batch_tables,
            options={"progress_event_seconds": 1},
        )
    )
    status = (await purges.namespaces.wait(purge_id)).status
    assert status.state is NamespacePurgeState.SUCCEEDED and status.files.deleted == tree.files
    runs = await eventually(
        partial(_runs, temporal_client, purge_id), lambda runs: len(runs) == status.run_count
    )
    for history in runs:
        upserts = _upserts(history)
        for (at, task, state, _), (before, task_before, state_before, _) in zip(
            upserts[1:], upserts, strict=False
        ):
            # A run's start publishes what the last run carried, then its first state, in one task.
            assert state != state_before or task == task_before or at - before >= INTERVAL, (
                f"an upsert of progress {at - before} after the last: {upserts}"
            )
    assert _upserts(runs[-1])[-1][2:] == (NamespacePurgeState.SUCCEEDED.value, tree.files)
    visible = (await temporal_client.get_workflow_handle(purge_id).describe()).typed_search_attributes
    assert (visible.get(STATE), visible.get(FILES_DELETED)) == ("SUCCEEDED", tree.files)
