"""The front door's hold (hold_namespace), against SeaweedFS's REST catalog, which deletes a
table's storage when it drops it: a drop with purge moves the table into the hold namespace and
answers before the plan, whatever the size; the plan and the upstream's drop follow from the held
table, and the purge deletes exactly its files. With a soft-delete window, undrop moves the table
back whole; a name re-used meanwhile is never touched, and a rerun purges the held table, never
the name."""

from __future__ import annotations

import asyncio
import uuid
from datetime import datetime

import pytest
from pydantic import ValidationError
from pyiceberg.catalog.rest import RestCatalog
from pyiceberg.catalog.sql import SqlCatalog
from pyiceberg.exceptions import NoSuchTableError
from temporalio.api.enums.v1 import EventType
from temporalio.client import Client

from icepurge.api.clients.errors import PurgeControlRejectedError, PurgeFailedError
from icepurge.api.clients.temporal_client import PurgeClient
from icepurge.api.server.front_door.drops import TableId, drop_with_purge
from icepurge.api.server.front_door.policy import FrontDoorAuth, FrontDoorPolicy
from icepurge.contract.names import (
    DROP_TABLE_ACTIVITY,
    HOLD_TABLE_ACTIVITY,
    LOAD_PLAN_AND_DROP_ACTIVITY,
)
from icepurge.contract.request import PurgeOptions
from icepurge.contract.states import PurgeState
from icepurge.contract.status import PurgeStatus
from icepurge.devstack.stack import EmbeddedStack
from tests.api_server import TOKENS
from tests.conftest import HOLD_NAMESPACE, HOLDING_CATALOG, LAKE_CATALOG, REST_CATALOG, REST_TABLE_BUCKET
from tests.purge_helpers import activities_in_order, assert_counts_add_up, current_details, status_when
from tests.store import S3Store
from tests.tables import simple_table

NAMESPACE = "holds"
WEEK = 7 * 86_400


@pytest.fixture(scope="module")
def upstream(rest_upstream: RestCatalog) -> RestCatalog:
    rest_upstream.create_namespace_if_not_exists((NAMESPACE,))
    return rest_upstream


@pytest.fixture(scope="module")
def door(api_url: str, stack: EmbeddedStack, upstream: RestCatalog) -> RestCatalog:
    return RestCatalog(
        "door",
        uri=f"{api_url}/iceberg/{HOLDING_CATALOG}",
        token=TOKENS["bucket-dropper"][0],
        warehouse=f"s3://{REST_TABLE_BUCKET}/",
        **stack.s3_properties,
    )


def _held_names(upstream: RestCatalog) -> set[str]:
    return {identifier[-1] for identifier in upstream.list_tables(HOLD_NAMESPACE)}


async def _scheduled_at(client: Client, purge_id: str, activity_type: str) -> datetime:
    history = await client.get_workflow_handle(purge_id).fetch_history()
    for event in history.events:
        attributes = event.activity_task_scheduled_event_attributes
        if event.HasField("activity_task_scheduled_event_attributes") and (
            attributes.activity_type.name == activity_type
        ):
            return event.event_time.ToDatetime().astimezone()
    raise AssertionError(f"{purge_id} scheduled no {activity_type}")


async def _tasks_before_the_answer(client: Client, purge_id: str) -> int:
    """Workflow tasks completed before the front door's wait (its update) completed."""
    completed = 0
    async for event in client.get_workflow_handle(purge_id).fetch_history_events():
        if event.event_type == EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_COMPLETED:
            return completed
        completed += event.event_type == EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED
    raise AssertionError(f"{purge_id}: no update completed")


async def test_a_held_drop_answers_before_the_plan_and_purges_exactly_its_files(
    door: RestCatalog, upstream: RestCatalog, purges: PurgeClient, s3: S3Store, temporal_client: Client
) -> None:
    name, kept_name = f"h{uuid.uuid4().hex[:8]}", f"k{uuid.uuid4().hex[:8]}"
    purged = simple_table(door, (NAMESPACE,), name, appends=3)
    kept = simple_table(door, (NAMESPACE,), kept_name, appends=1)
    kept_files = s3.list(kept.location())
    files = s3.list(purged.location())
    # In a thread: the test worker shares this event loop, and must go on while the drop waits.
    await asyncio.to_thread(door.purge_table, (NAMESPACE, name))
    with pytest.raises(NoSuchTableError):
        upstream.load_table((NAMESPACE, name))
    purge_id = TableId(HOLDING_CATALOG, [NAMESPACE], name).purge_id()
    status = (await purges.wait(purge_id)).status
    assert status.state is PurgeState.SUCCEEDED, status
    assert status.held_as is not None and status.held_as.startswith(f"{HOLD_NAMESPACE}.icepurge_")
    assert status.held_as.split(".")[-1] not in _held_names(upstream)
    # The answer came with the hold: the plan (and the upstream's drop) was scheduled after it.
    assert status.dropped_at is not None
    planned_from = await _scheduled_at(temporal_client, purge_id, LOAD_PLAN_AND_DROP_ACTIVITY)
    assert status.dropped_at <= planned_from
    steps = await activities_in_order(temporal_client, purge_id)
    assert steps.index(HOLD_TABLE_ACTIVITY) < steps.index(LOAD_PLAN_AND_DROP_ACTIVITY)
    # The wait came with the start, and the hold ran inside the first workflow task: the answer
    # waited for no activity dispatch and no second task.
    assert await _tasks_before_the_answer(temporal_client, purge_id) == 1
    # Every file of the table counted once: deleted, or found gone with the upstream's drop.
    assert status.storage_deleted_by_catalog
    total = status.counts.total()
    assert total.deleted + total.already_missing == status.planned.files == len(files)
    assert_counts_add_up(status)
    assert s3.list(purged.location()) == set()
    assert s3.list(kept.location()) == kept_files
    assert upstream.load_table((NAMESPACE, kept_name)).scan().to_arrow().num_rows == 10


async def test_undrop_moves_a_held_table_back_whole(
    upstream: RestCatalog, purges: PurgeClient, s3: S3Store, temporal_client: Client
) -> None:
    """Soft delete on an upstream that deletes storage on drop: without a hold there is nothing
    to undrop (the drop took the files); held, the table comes back as it was."""
    name = f"u{uuid.uuid4().hex[:8]}"
    table = simple_table(upstream, (NAMESPACE,), name, appends=2)
    files = s3.list(table.location())
    purge_id = await _held_for_a_week(purges, name)
    assert not upstream.table_exists((NAMESPACE, name))
    status = await purges.status(purge_id)
    assert status.state is PurgeState.SCHEDULED and status.held_as is not None
    held_name = status.held_as.split(".")[-1]
    assert held_name in _held_names(upstream)
    details = await current_details(temporal_client, purge_id)
    assert f"| held | as {status.held_as} until its catalog's drop |" in details
    await purges.undrop(purge_id)
    status = (await purges.wait(purge_id)).status
    assert status.state is PurgeState.UNDROPPED, status
    back = upstream.load_table((NAMESPACE, name))
    assert back.metadata_location == table.metadata_location
    assert back.scan().to_arrow().num_rows == 20
    assert s3.list(table.location()) == files
    assert held_name not in _held_names(upstream)
    upstream.drop_table((NAMESPACE, name))


def _retrying_the_drop(status: PurgeStatus) -> bool:
    return status.retrying is not None and status.retrying.step == DROP_TABLE_ACTIVITY


async def _held_for_a_week(purges: PurgeClient, name: str) -> str:
    """The front door's drop with purge, held, its deletes a week away: the purge's id."""
    policy = FrontDoorPolicy(hold_namespace=HOLD_NAMESPACE, purge_after_seconds=WEEK)
    outcome = await drop_with_purge(purges, TableId(REST_CATALOG, [NAMESPACE], name), "front-door:t", policy)
    assert outcome.dropped, outcome
    return outcome.purge_id


async def test_a_name_reused_while_held_is_never_touched(
    upstream: RestCatalog, purges: PurgeClient, s3: S3Store
) -> None:
    """The identifier is free once held, so a client may create a table under it at once. Undrop
    then refuses (the name is taken). SeaweedFS refuses to drop the held table while a table has
    its old name: the purge waits, saying so, deletes nothing, and goes on once the name is free."""
    name = f"n{uuid.uuid4().hex[:8]}"
    held = simple_table(upstream, (NAMESPACE,), name, appends=1)
    held_files = s3.list(held.location())
    purge_id = await _held_for_a_week(purges, name)
    newcomer = simple_table(upstream, (NAMESPACE,), name, appends=2)
    newcomer_files = s3.list(newcomer.location())
    with pytest.raises(PurgeControlRejectedError, match="taken by another table"):
        await purges.undrop(purge_id)
    await purges.expedite(purge_id)
    waiting = await status_when(
        purges,
        purge_id,
        lambda status: status.retrying is not None and status.retrying.step == DROP_TABLE_ACTIVITY,
    )
    assert waiting.state is PurgeState.DROPPING, waiting
    assert s3.list(held.location()) == held_files
    assert s3.list(newcomer.location()) == newcomer_files
    assert upstream.load_table((NAMESPACE, name)).scan().to_arrow().num_rows == 20
    upstream.drop_table((NAMESPACE, name))
    status = (await purges.wait(purge_id)).status
    assert status.state is PurgeState.SUCCEEDED, status
    assert_counts_add_up(status)
    assert s3.list(held.location()) == set()


def test_a_hold_is_refused_where_it_has_no_use() -> None:
    with pytest.raises(ValidationError, match="set one"):
        PurgeOptions(hold_namespace=HOLD_NAMESPACE, drop_before_plan=True)
    with pytest.raises(ValidationError, match="set one"):
        FrontDoorPolicy(hold_namespace=HOLD_NAMESPACE, upstream_keeps_storage=True)
    with pytest.raises(ValidationError, match="needs auth service"):
        FrontDoorPolicy(hold_namespace=HOLD_NAMESPACE, auth=FrontDoorAuth.PASS_THROUGH)


async def test_a_rerun_of_a_held_purge_purges_the_held_table_never_the_name(
    lake: SqlCatalog, purges: PurgeClient, s3: S3Store
) -> None:
    """Cancelled while it waited, the table stays held. A rerun purges the held table by its held
    name, never the old identifier again, which names another table by then."""
    table = simple_table(lake, ("holds_sql",), "t", appends=2)
    options = {"hold_namespace": "held_sql", "purge_after_seconds": WEEK}
    purge_id = await purges.purge_by_name(
        LAKE_CATALOG, ["holds_sql"], "t", requested_by="pytest", options=options
    )
    status = await status_when(purges, purge_id, lambda status: status.state is PurgeState.SCHEDULED)
    await purges.cancel(purge_id)
    with pytest.raises(PurgeFailedError):
        await purges.wait(purge_id)
    assert (await purges.status(purge_id)).state is PurgeState.CANCELLED
    assert status.held_as is not None
    held = tuple(status.held_as.split("."))
    assert lake.load_table(held).metadata_location == table.metadata_location
    newcomer = lake.create_table(
        ("holds_sql", "t"), schema=table.schema(), location=f"{table.location()}-new"
    )
    newcomer_files = s3.list(newcomer.location())
    await purges.rerun(purge_id)
    await status_when(purges, purge_id, lambda status: status.state is PurgeState.SCHEDULED)
    await purges.expedite(purge_id)
    status = (await purges.wait(purge_id)).status
    assert status.state is PurgeState.SUCCEEDED, status
    assert_counts_add_up(status)
    assert not lake.table_exists(held)
    assert s3.list(table.location()) == set()
    assert lake.load_table(("holds_sql", "t")).metadata_location == newcomer.metadata_location
    assert s3.list(newcomer.location()) == newcomer_files
