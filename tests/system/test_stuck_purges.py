"""No purge stuck in silence: a store nobody answers at shows as a retrying step with its
error, and the purge fails after a bounded time, naming the error, everywhere."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest
from pyiceberg.catalog.sql import SqlCatalog
from temporalio.client import Client

from icepurge.api.clients.errors import PurgeFailedError
from icepurge.api.clients.listing import PurgeFilter
from icepurge.api.clients.temporal_client import PurgeClient
from icepurge.contract.names import ERROR_STORE_UNREACHABLE, PLAN_AND_FINISH_ACTIVITY
from icepurge.contract.states import PurgeState
from icepurge.devstack.free_ports import free_ports
from icepurge.devstack.stack import EmbeddedStack
from icepurge.worker.settings import WorkerSettings
from tests.cli_runner import icepurge
from tests.purge_helpers import request_for, status_when
from tests.store import S3Store
from tests.tables import simple_table
from tests.workers import in_process_worker

QUEUE = "icepurge-stuck"
BUDGET_SECONDS = 12


@pytest.fixture(scope="module")
async def bounded_purges(
    temporal_client: Client, worker_settings: WorkerSettings
) -> AsyncIterator[PurgeClient]:
    async with in_process_worker(
        temporal_client, worker_settings, task_queue=QUEUE, config_fault_seconds=BUDGET_SECONDS
    ) as client:
        yield client


async def _listed_reason(client: PurgeClient, purge_id: str, field: str = "error") -> str:
    """Visibility is eventually consistent: polls the listing until the purge shows a reason."""
    for _ in range(50):
        page = await client.list(PurgeFilter(table="no_listener"))
        reasons = {item.purge_id: getattr(item, field) for item in page.items}
        if reasons.get(purge_id):
            return str(reasons[purge_id])
        await asyncio.sleep(0.2)
    return ""


async def test_an_unreachable_endpoint_is_shown_retrying_then_fails_naming_the_error(
    catalog: SqlCatalog, bounded_purges: PurgeClient, s3: S3Store, stack: EmbeddedStack
) -> None:
    table = simple_table(catalog, ("stuck",), "no_listener", appends=1)
    nobody = {**s3.properties, "s3.endpoint": f"http://127.0.0.1:{free_ports(1)[0]}"}
    purge_id = await bounded_purges.start(request_for(table, nobody))

    retrying = await status_when(bounded_purges, purge_id, lambda status: status.retrying is not None)
    step = retrying.retrying
    assert step is not None
    assert retrying.state is PurgeState.PLANNING
    assert step.step == PLAN_AND_FINISH_ACTIVITY
    assert step.attempt >= 2
    assert step.last_error is not None
    assert "cannot reach the object store" in step.last_error
    assert s3.properties["s3.secret-access-key"] not in step.last_error
    # What it waits for, in the list's reason column and in watch, while it waits.
    waiting = await _listed_reason(bounded_purges, purge_id, "reason")
    assert waiting.startswith(f"retrying {PLAN_AND_FINISH_ACTIVITY} (attempt "), waiting
    assert "cannot reach the object store" in waiting and "check s3.endpoint" in waiting
    code, stdout, _ = await icepurge(stack, "purge", "list", "--table", "no_listener", "--kind", "table")
    assert f"retrying {PLAN_AND_FINISH_ACTIVITY}" in stdout
    code, _, stderr = await icepurge(
        stack, "purge", "watch", purge_id, "--interval", "0.2", ICEPURGE_TASK_QUEUE=QUEUE
    )
    assert f"waiting: retrying {PLAN_AND_FINISH_ACTIVITY} (attempt " in " ".join(stderr.split())

    with pytest.raises(PurgeFailedError) as failed:
        await bounded_purges.wait(purge_id)
    assert failed.value.error_type == ERROR_STORE_UNREACHABLE
    final = await bounded_purges.status(purge_id)
    assert final.state is PurgeState.FAILED
    assert final.error_type == ERROR_STORE_UNREACHABLE
    assert final.last_error is not None
    assert "Could not connect" in final.last_error
    assert final.retrying is None, "a closed purge waits for nothing"
    assert s3.list(table.location()), "nothing was deleted"
    assert not await _listed_reason(bounded_purges, purge_id, "waiting")

    # The same request again, credentials fixed: it lands on the closed purge and says so.
    outcome = await bounded_purges.begin(request_for(table, s3.properties))
    assert outcome.purge_id == purge_id
    assert outcome.closed is not None
    assert "already closed FAILED" in outcome.closed and f"icepurge purge rerun {purge_id}" in outcome.closed

    code, stdout, stderr = await icepurge(
        stack, "purge", "watch", purge_id, "--interval", "0.2", ICEPURGE_TASK_QUEUE=QUEUE
    )
    assert code != 0
    printed = " ".join((stdout + stderr).split())  # the console wraps long lines
    assert f"FAILED: {ERROR_STORE_UNREACHABLE}: cannot reach the object store" in printed

    reason = await _listed_reason(bounded_purges, purge_id)
    assert reason.startswith(f"{ERROR_STORE_UNREACHABLE}: cannot reach the object store")
    code, stdout, _ = await icepurge(stack, "purge", "list", "--table", "no_listener")
    assert code == 0
    assert f"{ERROR_STORE_UNREACHABLE}: cannot reach" in stdout
