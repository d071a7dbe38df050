"""A chunk's deletes move on through a crash loop. Every attempt at deleting a small table's chunk
dies two seconds after its first bulk request reaches the store (its worker SIGKILLed), on a
store that deletes 200 keys a second: 400 keys a life. The table is one chunk of 800 files (a
chunk window of 1, so the plan is not cut in two), which a first attempt sends as one full group
(8 requests of 100 keys, 4 s): an attempt that sent full groups would send that group again on
every attempt and never close. A retried attempt ramps up from one request (100, 200, 400 keys),
saves a checkpoint within its life, and the next resumes from it: the purge closes, exact, after
at least two kills (the first attempt's group needs 4 s, the second's third group ends at 3.5 s).
The case CI met (stop 68): SeaweedFS at half speed took more than two seconds for one group of 8
requests of 1,000 keys. With the default window of 2 the plan was two chunks of 300 whose
requests the paced store served in any order, so a first attempt sometimes saved one chunk and
the second closed within its life (CI, stop 70)."""

from __future__ import annotations

import asyncio
import time
from functools import partial

from pyiceberg.catalog.sql import SqlCatalog
from temporalio.client import Client, WorkflowExecutionStatus

from icepurge.devstack.process import ServiceProcess
from icepurge.devstack.s3_proxy import FaultPlan
from icepurge.devstack.stack import EmbeddedStack
from icepurge.devstack.synthetic_table import TableShape
from tests.crash_loops import CrashLoopPurge, purge_through_a_crash_loop
from tests.purge_helpers import assert_purged_exactly
from tests.store import S3Store

QUEUE = "icepurge-delete-crash-loop"
SHAPE = TableShape(manifests=1, files_per_manifest=800)
ONE_CHUNK = {"chunk_window": 1}
KEYS_A_REQUEST = "100"
KEYS_A_SECOND = 200.0
LIFE_SECONDS = 2.0
# Each death costs the step's heartbeat timeout (15 s) and the retry's backoff (1 s, doubling):
# the three or four lives this takes close in ~60-80 s; sending full groups never closes.
BOUND_SECONDS = 240


def _worker(stack: EmbeddedStack, generation: int) -> tuple[ServiceProcess, float]:
    """A worker started, and when: a delete that arrives after that is its own."""
    worker = stack.worker_process(
        f"delete-crash-loop-worker-{generation}",
        ICEPURGE_TASK_QUEUE=QUEUE,
        ICEPURGE_DELETE_BATCH_FILES=KEYS_A_REQUEST,
    )
    started = time.monotonic()
    worker.start()
    return worker, started


async def _crash_loop(
    client: Client, stack: EmbeddedStack, purge_id: str, faults: FaultPlan, deadline: float
) -> tuple[int, int]:
    """Kills each worker LIFE_SECONDS after its first bulk delete arrived, and starts another,
    until the purge closes. Returns the workers killed and the bulk requests the store had."""
    handle = client.get_workflow_handle(purge_id)
    killed = 0
    worker, started = _worker(stack, 0)
    try:
        while time.monotonic() < deadline:
            if (await handle.describe()).status != WorkflowExecutionStatus.RUNNING:
                return killed, faults.delete_requests
            with faults.lock:
                first = next((moment for moment in faults.delete_times if moment > started), None)
            if first is not None:
                await asyncio.sleep(max(0.0, first + LIFE_SECONDS - time.monotonic()))
                # A worker whose purge closed within its life is not one the loop killed.
                if (await handle.describe()).status != WorkflowExecutionStatus.RUNNING:
                    continue
                worker.kill()
                killed += 1
                worker, started = _worker(stack, killed)
            await asyncio.sleep(0.1)
    finally:
        worker.kill()
    raise AssertionError(f"{purge_id} did not close within {BOUND_SECONDS} s; workers killed: {killed}")


def _paced(faults: FaultPlan) -> None:
    faults.delete_keys_per_second = KEYS_A_SECOND


async def test_deletes_move_on_through_a_crash_loop_and_the_purge_closes_exact(
    catalog: SqlCatalog, temporal_client: Client, s3: S3Store, stack: EmbeddedStack
) -> None:
    purge = CrashLoopPurge(catalog, temporal_client, s3, stack, QUEUE, BOUND_SECONDS, ONE_CHUNK)
    kill_loop = partial(_crash_loop, temporal_client, stack)
    run = await purge_through_a_crash_loop(purge, ("delete_crash_loop", "t"), SHAPE, _paced, kill_loop)
    killed, requests = run.kills
    print(
        f"\ndelete crash loop: {len(run.owned):,} objects, {killed} workers killed {LIFE_SECONDS:.0f} s "
        f"into their deletes, {requests} bulk requests, closed {run.status.state.value} "
        f"in {run.seconds:.0f} s"
    )
    assert killed >= 2, "the deletes fit in one life: the loop proved nothing"
    assert_purged_exactly(run.status, run.owned, run.left)
