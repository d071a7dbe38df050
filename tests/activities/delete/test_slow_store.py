"""A store slower to answer than a step's heartbeat timeout: the step stays alive while its
requests are in flight (each still bounded by the client's own timeouts), so the purge finishes
on each chunk's first attempt instead of timing out and sending the same slow requests again,
without end (seen on SeaweedFS busy deleting a dropped table's storage itself)."""

from __future__ import annotations

import asyncio
import dataclasses
from datetime import timedelta

import pytest
from pyiceberg.catalog.sql import SqlCatalog
from temporalio.client import Client

from icepurge.activities.delete import object_store
from icepurge.api.clients.temporal_client import PurgeClient
from icepurge.contract import activity_steps
from icepurge.contract.names import CHUNK_ACTIVITY
from icepurge.contract.states import PurgeState
from icepurge.devstack.s3_proxy import s3_proxy, through_proxy
from icepurge.devstack.stack import EmbeddedStack
from tests.purge_helpers import request_for, status_when
from tests.store import S3Store
from tests.tables import many_files_table

HEARTBEAT_SECONDS = 3
DELETE_DELAY_SECONDS = 4.5


async def _chunk_attempts(client: Client, purge_id: str) -> list[int]:
    history = await client.get_workflow_handle(purge_id).fetch_history()
    chunks = {
        event.event_id
        for event in history.events
        if event.HasField("activity_task_scheduled_event_attributes")
        and event.activity_task_scheduled_event_attributes.activity_type.name == CHUNK_ACTIVITY
    }
    return [
        event.activity_task_started_event_attributes.attempt
        for event in history.events
        if event.HasField("activity_task_started_event_attributes")
        and event.activity_task_started_event_attributes.scheduled_event_id in chunks
    ]


async def test_a_chunk_slower_than_its_heartbeat_timeout_finishes_on_its_first_attempt(
    catalog: SqlCatalog,
    purges: PurgeClient,
    temporal_client: Client,
    s3: S3Store,
    stack: EmbeddedStack,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The worker runs in this process: a short heartbeat timeout and a fast beat stand in for
    the 15 s and 5 s of production."""
    monkeypatch.setattr(
        activity_steps,
        "CHUNK",
        dataclasses.replace(activity_steps.CHUNK, heartbeat=timedelta(seconds=HEARTBEAT_SECONDS)),
    )
    monkeypatch.setattr(object_store, "ALIVE_SECONDS", 0.5)
    table = many_files_table(catalog, ("slow_store",), "t", manifests=2, files=5)
    with s3_proxy(stack.ports.s3) as (port, faults):
        faults.delete_delay = DELETE_DELAY_SECONDS
        purge_id = await purges.start(
            request_for(table, through_proxy(s3.properties, port), express_lane=False)
        )
        await status_when(purges, purge_id, lambda status: status.chunks_total > 0)
        chunks_done = await asyncio.wait_for(
            status_when(purges, purge_id, lambda status: status.chunks_done == status.chunks_total),
            timeout=60,
        )
        faults.delete_delay = 0.0
        report = await asyncio.wait_for(purges.wait(purge_id), timeout=60)
    assert chunks_done.chunks_total >= 1
    assert report.status.state is PurgeState.SUCCEEDED
    assert await _chunk_attempts(temporal_client, purge_id) == [1] * chunks_done.chunks_total
    assert s3.list(table.location()) == set()
