"""A plan moves on through a crash loop. Every attempt at planning a ~10k-file table dies two
seconds after it starts (its worker SIGKILLed), while the table's reads are slow enough that a
plan takes several lives. Each attempt reads on from what the one before saved, so the plan is
done, and the purge closes, exact, within the bound; planning from the start on every attempt
never closes.

Only planning is killed: once the plan is kept in the state location the step's deletes run.
Deletes through a crash loop are tests/activities/delete/test_delete_crash_loop.py's."""

from __future__ import annotations

import asyncio
import time
from functools import partial

from pyiceberg.catalog.sql import SqlCatalog
from temporalio.api.enums.v1 import PendingActivityState
from temporalio.client import Client, WorkflowExecutionDescription, WorkflowExecutionStatus

from icepurge.contract.names import PLAN_ACTIVITY, PLAN_AND_FINISH_ACTIVITY
from icepurge.devstack.process import ServiceProcess
from icepurge.devstack.s3_proxy import FaultPlan
from icepurge.devstack.stack import STATE_BUCKET, EmbeddedStack
from icepurge.devstack.synthetic_table import TableShape
from tests.crash_loops import CrashLoopPurge, purge_through_a_crash_loop
from tests.purge_helpers import assert_purged_exactly
from tests.store import S3Store

QUEUE = "icepurge-crash-loop"
# Sixty appends of 160 files: 60 manifest lists, 60 older metadata files and 60 manifests to read.
SHAPE = TableShape(manifests=60, files_per_manifest=160, snapshots=60)
# Each read of the table's files waits this long: ~5 s of planning, on 8 readers.
READ_DELAY = 0.2
LIFE_SECONDS = 2.0
# Each death costs the step's heartbeat timeout (15 s) and the retry's backoff (1 s, doubling):
# 5 deaths take ~75 s, 8 take ~230 s. On a machine at half speed (2026-12-01) the plan was kept
# in the fifth life, as on one at full speed; planning from the start on every attempt never
# closes, however long the bound.
BOUND_SECONDS = 400
PLANNING = {PLAN_ACTIVITY, PLAN_AND_FINISH_ACTIVITY}


def _worker(stack: EmbeddedStack, generation: int) -> ServiceProcess:
    worker = stack.worker_process(f"crash-loop-worker-{generation}", ICEPURGE_TASK_QUEUE=QUEUE)
    worker.start()
    return worker


def _planning_attempt(description: WorkflowExecutionDescription) -> int | None:
    """The planning attempt a worker has started, if one has."""
    for pending in description.raw_description.pending_activities:
        if (
            pending.activity_type.name in PLANNING
            and pending.state == PendingActivityState.PENDING_ACTIVITY_STATE_STARTED
        ):
            return pending.attempt
    return None


def _planned(s3: S3Store, purge_id: str) -> bool:
    """Whether the purge's plan is kept in the state location (its run's folder holds plan.json)."""
    return any(key.endswith("/plan.json") for key in s3.list(f"s3://{STATE_BUCKET}/purges/{purge_id}/"))


async def _crash_loop(
    client: Client, stack: EmbeddedStack, s3: S3Store, purge_id: str, _: FaultPlan, deadline: float
) -> list[int]:
    """Kills the worker LIFE_SECONDS after each planning attempt starts, and starts another, until
    the plan is kept; then waits for the purge to close. Returns the attempts killed."""
    handle = client.get_workflow_handle(purge_id)
    killed: list[int] = []
    planned = False
    worker = _worker(stack, 0)
    try:
        while time.monotonic() < deadline:
            description = await handle.describe()
            if description.status != WorkflowExecutionStatus.RUNNING:
                return killed
            attempt = _planning_attempt(description)
            if attempt is not None and attempt not in killed and not planned:
                await asyncio.sleep(LIFE_SECONDS)
                planned = _planned(s3, purge_id)
                if planned:
                    continue
                worker.kill()
                killed.append(attempt)
                worker = _worker(stack, len(killed))
            await asyncio.sleep(0.1)
    finally:
        worker.kill()
    raise AssertionError(f"{purge_id} did not close within {BOUND_SECONDS} s; attempts killed: {killed}")


def _slow_reads(faults: FaultPlan) -> None:
    faults.read_delay = READ_DELAY


async def test_planning_moves_on_through_a_crash_loop_and_the_purge_closes_exact(
    catalog: SqlCatalog, temporal_client: Client, s3: S3Store, stack: EmbeddedStack
) -> None:
    purge = CrashLoopPurge(catalog, temporal_client, s3, stack, QUEUE, BOUND_SECONDS)
    kill_loop = partial(_crash_loop, temporal_client, stack, s3)
    run = await purge_through_a_crash_loop(purge, ("crash_loop", "t"), SHAPE, _slow_reads, kill_loop)
    print(
        f"\ncrash loop: {len(run.owned):,} objects, {len(run.kills)} planning attempts killed "
        f"{LIFE_SECONDS:.0f} s after they started, closed {run.status.state.value} in {run.seconds:.0f} s"
    )
    assert len(run.kills) >= 2, "planning fit in one life: the loop proved nothing"
    assert_purged_exactly(run.status, run.owned, run.left)
