"""A catalog may retry a start it never got an answer to: the same request returns the same
purge whatever its state, and its result stays. Running a closed purge again is explicit."""

from __future__ import annotations

import asyncio

import pytest
from pyiceberg.catalog.sql import SqlCatalog
from temporalio.client import Client

from icepurge.api.clients.errors import PurgeControlRejectedError, PurgeFailedError
from icepurge.api.clients.http_client import HttpPurgeClient
from icepurge.api.clients.temporal_client import PurgeClient
from icepurge.contract.states import PurgeState
from icepurge.devstack.stack import EmbeddedStack
from tests.api_server import TOKENS
from tests.cli_runner import icepurge
from tests.purge_helpers import request_for
from tests.store import S3Store
from tests.tables import simple_table


async def _runs(client: Client, purge_id: str, at_least: int) -> int:
    """Runs listed under the purge's id; visibility is eventually consistent, so it polls."""
    found = 0
    for _ in range(50):
        found = len([run async for run in client.list_workflows(f"WorkflowId = '{purge_id}'")])
        if found >= at_least:
            break
        await asyncio.sleep(0.2)
    return found


async def test_a_repeated_start_returns_the_closed_purge_and_keeps_its_result(
    catalog: SqlCatalog, purges: PurgeClient, s3: S3Store, temporal_client: Client
) -> None:
    table = simple_table(catalog, ("idempotent",), "done", appends=1)
    request = request_for(table, s3.properties)
    purge_id = await purges.start(request)
    first = await purges.wait(purge_id)
    assert first.status.state is PurgeState.SUCCEEDED

    assert await purges.start(request) == purge_id

    status = await purges.status(purge_id)
    assert status.state is PurgeState.SUCCEEDED
    assert status.started_at == first.status.started_at
    await asyncio.sleep(1)
    assert await _runs(temporal_client, purge_id, 1) == 1
    with pytest.raises(PurgeControlRejectedError, match="SUCCEEDED"):
        await purges.rerun(purge_id)


async def test_a_failed_purge_runs_again_only_when_asked_and_earlier_runs_stay(
    catalog: SqlCatalog,
    purges: PurgeClient,
    s3: S3Store,
    temporal_client: Client,
    api_url: str,
    stack: EmbeddedStack,
) -> None:
    table = simple_table(catalog, ("idempotent",), "fixed_later", appends=1)
    wrong = {**s3.properties, "s3.secret-access-key": "not-the-secret"}
    purge_id = await purges.start(request_for(table, wrong))
    with pytest.raises(PurgeFailedError):
        await purges.wait(purge_id)
    assert await purges.start(request_for(table, wrong)) == purge_id
    assert (await purges.status(purge_id)).state is PurgeState.FAILED

    async with HttpPurgeClient(api_url, TOKENS["admin"][0]) as http:
        assert await http.rerun(purge_id, s3.properties) == purge_id
    report = await purges.wait(purge_id)

    assert report.status.state is PurgeState.SUCCEEDED
    assert s3.list(table.location()) == set()
    assert await _runs(temporal_client, purge_id, 2) == 2
    code, stdout, stderr = await icepurge(stack, "purge", "rerun", purge_id)
    assert code == 2
    assert "SUCCEEDED" in stdout + stderr


async def test_a_dry_run_does_not_stand_in_for_the_real_purge(
    catalog: SqlCatalog, purges: PurgeClient, s3: S3Store
) -> None:
    table = simple_table(catalog, ("idempotent",), "dry_first", appends=1)
    dry_id = await purges.start(request_for(table, s3.properties, dry_run=True))
    await purges.wait(dry_id)
    assert s3.list(table.location())

    real_id = await purges.start(request_for(table, s3.properties))
    report = await purges.wait(real_id)

    assert real_id != dry_id
    assert report.status.dry_run is False
    assert s3.list(table.location()) == set()


async def test_start_again_runs_a_purge_that_closed_before_its_drop_and_keeps_one_that_completed(
    catalog: SqlCatalog, purges: PurgeClient, s3: S3Store, temporal_client: Client
) -> None:
    """The front door's start for a snapshot whose purge closed before its table was dropped. A
    concurrent caller's purge that completed meanwhile must not get a run after it, whose plan of a
    dropped table would end FAILED and read as the purge's state."""
    unconfirmed = simple_table(catalog, ("idempotent",), "unconfirmed", appends=1)
    request = request_for(unconfirmed, s3.properties, await_drop_seconds=1)
    purge_id = await purges.start(request)
    with pytest.raises(PurgeFailedError):
        await purges.wait(purge_id)
    first_run = (await temporal_client.get_workflow_handle(purge_id).describe()).run_id
    assert await purges.start_again(request) == purge_id
    assert (await temporal_client.get_workflow_handle(purge_id).describe()).run_id != first_run
    assert await _runs(temporal_client, purge_id, 2) == 2

    completed = simple_table(catalog, ("idempotent",), "completed", appends=1)
    request = request_for(completed, s3.properties)
    purge_id = await purges.start(request)
    assert (await purges.wait(purge_id)).status.state is PurgeState.SUCCEEDED
    assert await purges.start_again(request) == purge_id
    assert (await purges.status(purge_id)).state is PurgeState.SUCCEEDED
    await asyncio.sleep(1)
    assert await _runs(temporal_client, purge_id, 1) == 1
