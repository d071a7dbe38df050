"""The express lane: a small table purged by name takes three activities (load and plan; drop;
guard, delete and finalize), and a small purge by snapshot one (plan, guard, delete and
finalize), with the same outcome, counts and report as the step-by-step path; a table too big
for it goes on step by step from the plan its first activity made."""

from __future__ import annotations

import dataclasses
import json

import pytest
from pyiceberg.catalog.sql import SqlCatalog
from pyiceberg.table import Table
from temporalio.client import Client
from temporalio.exceptions import ApplicationError
from temporalio.testing import ActivityEnvironment

from icepurge.activities.catalog.catalog_retries import catalog_retries_bounded
from icepurge.api.clients.temporal_client import PurgeClient
from icepurge.contract import express_steps
from icepurge.contract.activity_steps import CATALOG_RETRY
from icepurge.contract.express_steps import DroppedPlan
from icepurge.contract.names import (
    CHUNK_ACTIVITY,
    DELIVER_EVENTS_ACTIVITY,
    DROP_TABLE_ACTIVITY,
    ERROR_CATALOG_UNAVAILABLE,
    FINALIZE_ACTIVITY,
    FINISH_SMALL_PURGE_ACTIVITY,
    LIVE_TABLE_GUARD_ACTIVITY,
    LOAD_PLAN_AND_DROP_ACTIVITY,
    LOAD_TABLE_ACTIVITY,
    PLAN_ACTIVITY,
    PLAN_AND_FINISH_ACTIVITY,
)
from icepurge.contract.states import PurgeState
from icepurge.contract.status import PurgeStatus
from tests.conftest import LAKE_CATALOG
from tests.purge_helpers import activities_in_order, assert_counts_add_up, purge, request_for
from tests.store import S3Store
from tests.tables import add_delete_files, many_files_table, simple_table

NAMESPACE = ("express",)


def _steps(activities: list[str]) -> list[str]:
    return [name for name in activities if name != DELIVER_EVENTS_ACTIVITY]


def _outcomes(status: PurgeStatus) -> dict[str, tuple[int, int, int, int]]:
    return {
        category: (counts.deleted, counts.already_missing, counts.failed, counts.skipped_total)
        for category, counts in status.counts.by_category.items()
    }


async def _dropped_plan(client: Client, purge_id: str) -> DroppedPlan:
    """load_plan_and_drop's result, as the purge's history recorded it."""
    scheduled: set[int] = set()
    async for event in client.get_workflow_handle(purge_id).fetch_history_events():
        if event.HasField("activity_task_scheduled_event_attributes"):
            if (
                event.activity_task_scheduled_event_attributes.activity_type.name
                == LOAD_PLAN_AND_DROP_ACTIVITY
            ):
                scheduled.add(event.event_id)
        elif event.HasField("activity_task_completed_event_attributes"):
            completed = event.activity_task_completed_event_attributes
            if completed.scheduled_event_id in scheduled:
                (result,) = await client.data_converter.decode(completed.result.payloads, [DroppedPlan])
                assert isinstance(result, DroppedPlan)
                return result
    raise AssertionError(f"{purge_id} has no load_plan_and_drop result")


async def _events(client: Client, purge_id: str) -> int:
    return len((await client.get_workflow_handle(purge_id).fetch_history()).events)


def _tables_with_delete_files(catalog: SqlCatalog, *names: str) -> dict[str, Table]:
    """Tables of the same shape: three appends, then a position and an equality delete file."""
    tables = {}
    for name in names:
        add_delete_files(simple_table(catalog, NAMESPACE, name, appends=3), "c1")
        tables[name] = catalog.load_table((*NAMESPACE, name))
    return tables


async def _purged(purges: PurgeClient, table: str, **options: object) -> PurgeStatus:
    purge_id = await purges.purge_by_name(
        LAKE_CATALOG, list(NAMESPACE), table, requested_by="pytest", options=dict(options)
    )
    status = (await purges.wait(purge_id)).status
    assert status.state is PurgeState.SUCCEEDED, status
    assert_counts_add_up(status)
    return status


async def test_a_small_table_takes_two_steps_with_the_step_by_step_outcome(
    lake: SqlCatalog, purges: PurgeClient, temporal_client: Client, s3: S3Store
) -> None:
    tables = _tables_with_delete_files(lake, "quick", "stepwise")
    quick = await _purged(purges, "quick")
    stepwise = await _purged(purges, "stepwise", express_lane=False)
    assert _steps(await activities_in_order(temporal_client, quick.purge_id)) == [
        LOAD_PLAN_AND_DROP_ACTIVITY,
        FINISH_SMALL_PURGE_ACTIVITY,
    ]
    assert _steps(await activities_in_order(temporal_client, stepwise.purge_id))[:3] == [
        LOAD_TABLE_ACTIVITY,
        PLAN_ACTIVITY,
        DROP_TABLE_ACTIVITY,
    ]
    for status, table in ((quick, tables["quick"]), (stepwise, tables["stepwise"])):
        assert not lake.table_exists(table.name())
        assert s3.list(table.location()) == set()
        assert status.dropped_at is not None
        assert status.chunks_done == status.chunks_total > 0
        assert status.counts.total().deleted == status.planned.files
        assert status.report_location is not None
        report = json.loads(s3.read(status.report_location))
        assert [guard["guard"] for guard in report["guards"]] == ["protection", "live_table"]
    # The same table shape, the same outcome (bytes aside: paths differ in length): only the
    # number of steps differs.
    assert _outcomes(quick) == _outcomes(stepwise)
    assert quick.planned == stepwise.planned
    assert [guard.guard for guard in quick.guards] == [guard.guard for guard in stepwise.guards]
    quick_events = len((await temporal_client.get_workflow_handle(quick.purge_id).fetch_history()).events)
    stepwise_events = len(
        (await temporal_client.get_workflow_handle(stepwise.purge_id).fetch_history()).events
    )
    assert quick_events < stepwise_events
    # The small plan travelled in the step's result: no plan, chunk or checkpoint object of its
    # own reached the state location (only the plan kept before the drop and the report did).
    held = (await _dropped_plan(temporal_client, quick.purge_id)).plan.held
    assert held is not None
    assert {"plan.json", "context.json", "content/000000.json"} <= set(held)


async def test_a_table_over_the_express_size_goes_on_step_by_step_from_its_plan(
    lake: SqlCatalog,
    purges: PurgeClient,
    temporal_client: Client,
    s3: S3Store,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The worker runs in this process: a lower limit makes a 13-file table 'big'."""
    monkeypatch.setattr(express_steps, "EXPRESS_MAX_FILES", 5)
    table = simple_table(lake, NAMESPACE, "big", appends=3)
    status = await _purged(purges, "big")
    steps = _steps(await activities_in_order(temporal_client, status.purge_id))
    assert steps[:2] == [LOAD_PLAN_AND_DROP_ACTIVITY, LIVE_TABLE_GUARD_ACTIVITY]
    assert steps[-1] == FINALIZE_ACTIVITY
    assert CHUNK_ACTIVITY in steps
    assert (
        PLAN_ACTIVITY not in steps and LOAD_TABLE_ACTIVITY not in steps and DROP_TABLE_ACTIVITY not in steps
    )
    assert FINISH_SMALL_PURGE_ACTIVITY not in steps
    assert s3.list(table.location()) == set()
    assert status.counts.total().deleted == status.planned.files == 13
    # Too big to hold: its plan went to the state location for the chunks to read.
    assert (await _dropped_plan(temporal_client, status.purge_id)).plan.held is None


async def _purged_by_snapshot(
    purges: PurgeClient, s3: S3Store, table: Table, **options: object
) -> PurgeStatus:
    status = (await purge(purges, request_for(table, s3.properties, **options))).status
    assert status.state is PurgeState.SUCCEEDED, status
    assert_counts_add_up(status)
    assert s3.list(table.location()) == set()
    return status


async def test_a_small_purge_by_snapshot_takes_one_step_with_the_step_by_step_outcome(
    catalog: SqlCatalog, purges: PurgeClient, temporal_client: Client, s3: S3Store
) -> None:
    tables = _tables_with_delete_files(catalog, "snapshot_quick", "snapshot_stepwise")
    quick = await _purged_by_snapshot(purges, s3, tables["snapshot_quick"])
    stepwise = await _purged_by_snapshot(purges, s3, tables["snapshot_stepwise"], express_lane=False)
    assert _steps(await activities_in_order(temporal_client, quick.purge_id)) == [PLAN_AND_FINISH_ACTIVITY]
    stepwise_steps = _steps(await activities_in_order(temporal_client, stepwise.purge_id))
    assert stepwise_steps[:2] == [PLAN_ACTIVITY, LIVE_TABLE_GUARD_ACTIVITY]
    assert stepwise_steps[-1] == FINALIZE_ACTIVITY
    for status in (quick, stepwise):
        assert status.chunks_done == status.chunks_total > 0
        assert status.counts.total().deleted == status.planned.files > 13
        assert status.report_location is not None
        report = json.loads(s3.read(status.report_location))
        assert [guard["guard"] for guard in report["guards"]] == ["live_table"]
    assert _outcomes(quick) == _outcomes(stepwise)
    assert quick.planned == stepwise.planned
    assert await _events(temporal_client, quick.purge_id) < await _events(temporal_client, stepwise.purge_id)


async def test_a_one_step_purge_of_several_chunks_deletes_them_side_by_side(
    catalog: SqlCatalog, purges: PurgeClient, temporal_client: Client, s3: S3Store
) -> None:
    """100 data files make two chunks at the test worker's 40 a chunk: the step runs them at once (each
    in this activity's context, which its heartbeats and metrics need)."""
    table = many_files_table(catalog, NAMESPACE, "snapshot_chunks", manifests=2, files=50)
    status = await _purged_by_snapshot(purges, s3, table)
    assert _steps(await activities_in_order(temporal_client, status.purge_id)) == [PLAN_AND_FINISH_ACTIVITY]
    assert status.chunks_done == status.chunks_total == 2
    assert status.counts.total().deleted == status.planned.files


async def test_a_purge_by_snapshot_over_the_one_step_size_goes_on_step_by_step_from_its_plan(
    catalog: SqlCatalog,
    purges: PurgeClient,
    temporal_client: Client,
    s3: S3Store,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Its manifests list more entries (3) than the one step takes: the step announced its chunks and
    returned the plan, and the workflow ran them (the worker runs in this process)."""
    monkeypatch.setattr(express_steps, "SNAPSHOT_AT_ONCE_MAX_ENTRIES", 2)
    table = simple_table(catalog, NAMESPACE, "snapshot_big", appends=3)
    status = await _purged_by_snapshot(purges, s3, table)
    steps = _steps(await activities_in_order(temporal_client, status.purge_id))
    assert steps[:2] == [PLAN_AND_FINISH_ACTIVITY, LIVE_TABLE_GUARD_ACTIVITY]
    assert CHUNK_ACTIVITY in steps
    assert steps[-1] == FINALIZE_ACTIVITY
    assert status.counts.total().deleted == status.planned.files == 13


@pytest.mark.parametrize(("attempt", "gives_up"), [(1, False), (CATALOG_RETRY.maximum_attempts, True)])
def test_a_catalog_that_stays_down_fails_the_express_step_after_a_catalog_steps_attempts(
    attempt: int, gives_up: bool
) -> None:
    """The express steps retry for as long as a store fault; a catalog fault, only as long as a
    catalog step of its own would (then the purge fails, naming the catalog's error)."""

    def load() -> None:
        with catalog_retries_bounded():
            raise ApplicationError("catalog call failed, retrying: 503", type=ERROR_CATALOG_UNAVAILABLE)

    environment = ActivityEnvironment()
    environment.info = dataclasses.replace(environment.info, attempt=attempt)
    with pytest.raises(ApplicationError) as failed:
        environment.run(load)
    assert failed.value.type == ERROR_CATALOG_UNAVAILABLE
    assert failed.value.non_retryable is gives_up
    assert ("gave up after" in failed.value.message) is gives_up
