"""Prompt recovery: a killed worker's planning resumes from its checkpoint instead of starting
over, and a worker asked to stop (SIGTERM) hands its running steps back at once, so another
worker retries them without waiting for a heartbeat timeout. Small purges by snapshot take one
step (plan_and_finish_small) unless they opt out of the express lane; both paths are killed."""

from __future__ import annotations

import asyncio
from collections import Counter
from pathlib import PurePosixPath

import pytest
from pyiceberg.catalog.sql import SqlCatalog
from pyiceberg.table import Table
from temporalio.client import Client

from icepurge.activities.plan.plan_model import PlanCheckpoint
from icepurge.api.clients.temporal_client import PurgeClient
from icepurge.contract.names import (
    CHUNK_ACTIVITY,
    FINALIZE_ACTIVITY,
    PLAN_ACTIVITY,
    PLAN_AND_FINISH_ACTIVITY,
)
from icepurge.contract.states import PurgeState
from icepurge.contract.status import PurgeReport
from icepurge.devstack.process import ServiceProcess
from icepurge.devstack.s3_proxy import s3_proxy, through_proxy
from icepurge.devstack.stack import EmbeddedStack
from icepurge.devstack.synthetic_table import TableShape, synthetic_table
from tests.purge_helpers import assert_counts_add_up, request_for
from tests.store import S3Store, key_of
from tests.tables import many_files_table

QUEUE = "icepurge-recovery"
MANIFESTS = 200


# Every worker of a fleet plans with the same settings (a retried plan cuts where its first attempt did).
CHECKPOINTS = {"ICEPURGE_PLAN_CHECKPOINT_MANIFESTS": "20"}


def _worker(stack: EmbeddedStack, name: str, **env: str) -> ServiceProcess:
    worker = stack.worker_process(name, ICEPURGE_TASK_QUEUE=QUEUE, **env)
    worker.start()
    worker.wait_for_log("icepurge worker polling")
    return worker


def _assert_purged(report: PurgeReport, s3: S3Store, table: Table) -> None:
    assert report.status.state is PurgeState.SUCCEEDED
    assert s3.list(table.location()) == set()
    assert_counts_add_up(report.status)


async def _retried_attempts(client: Client, purge_id: str, activity_type: str) -> list[str]:
    """For each retried attempt of an activity type: how the attempt before it ended."""
    scheduled: dict[int, str] = {}
    causes = []
    async for event in client.get_workflow_handle(purge_id).fetch_history_events():
        if event.HasField("activity_task_scheduled_event_attributes"):
            scheduled[event.event_id] = event.activity_task_scheduled_event_attributes.activity_type.name
        if event.HasField("activity_task_started_event_attributes"):
            started = event.activity_task_started_event_attributes
            if scheduled.get(started.scheduled_event_id) == activity_type and started.attempt > 1:
                failure = started.last_failure
                causes.append("timeout" if failure.HasField("timeout_failure_info") else failure.message)
    return causes


async def _recorded_checkpoint(client: Client, purge_id: str) -> PlanCheckpoint | None:
    """The planning checkpoint the server holds, which is what a retried attempt resumes from."""
    description = await client.get_workflow_handle(purge_id).describe()
    for pending in description.raw_description.pending_activities:
        planning = pending.activity_type.name in (PLAN_ACTIVITY, PLAN_AND_FINISH_ACTIVITY)
        if planning and pending.heartbeat_details.payloads:
            details = await client.data_converter.decode(pending.heartbeat_details.payloads)
            return PlanCheckpoint.model_validate(details[0])
    return None


async def _checkpoint_covering(client: Client, purge_id: str, manifests: int) -> PlanCheckpoint:
    recorded = PlanCheckpoint()
    while recorded.manifests_done < manifests:
        await asyncio.sleep(0.1)
        recorded = await _recorded_checkpoint(client, purge_id) or recorded
    return recorded


async def test_killed_planning_resumes_from_its_checkpoint(
    catalog: SqlCatalog, temporal_client: Client, s3: S3Store, stack: EmbeddedStack
) -> None:
    table = synthetic_table(
        catalog, ("recovery", "plan_kill"), TableShape(manifests=MANIFESTS, files_per_manifest=1)
    )
    snapshot = table.current_snapshot()
    assert snapshot is not None
    in_plan_order = [PurePosixPath(m.manifest_path).name for m in snapshot.manifests(table.io)]
    purges = PurgeClient(temporal_client, QUEUE)
    with s3_proxy(stack.ports.s3) as (port, faults):
        # A checkpoint every 20 manifests, and reads slow enough to kill the worker between them:
        # 8 readers take 200 x 0.6 / 8 = 15 s. The worker dies once the server holds a checkpoint
        # that covers a quarter of the manifests, with most of the rest still unread.
        faults.read_delay = 0.6
        properties = through_proxy(s3.properties, port)
        worker = _worker(stack, "recovery-plan-0", **CHECKPOINTS)
        try:
            purge_id = await purges.start(request_for(table, properties))
            covering = _checkpoint_covering(temporal_client, purge_id, MANIFESTS // 4)
            recorded = await asyncio.wait_for(covering, timeout=120)
            worker.kill()
            read_before_kill = _manifests_read(faults.reads, in_plan_order)
            worker = _worker(stack, "recovery-plan-1", **CHECKPOINTS)
            report = await asyncio.wait_for(purges.wait(purge_id), timeout=240)
        finally:
            worker.stop()

    _assert_purged(report, s3, table)
    assert recorded.manifests_done < MANIFESTS, "the kill came after planning had read every manifest"
    read_after_kill = _manifests_read(faults.reads, in_plan_order) - read_before_kill
    covered = set(in_plan_order[: recorded.manifests_done])
    assert covered <= set(read_before_kill)
    # The retried attempt starts where the checkpoint ends: what it covered is never read again.
    assert not covered & set(read_after_kill), sorted(covered & set(read_after_kill))
    assert set(read_after_kill) <= set(in_plan_order[recorded.manifests_done :])


def _manifests_read(reads: list[str], manifests: list[str]) -> Counter[str]:
    names = set(manifests)
    return Counter(name for name in (PurePosixPath(path).name for path in reads) if name in names)


# A small table's deletes run in the chunk step, or (express lane) in the one step that plans too.
STEP_OF_DELETES = [(False, CHUNK_ACTIVITY), (True, PLAN_AND_FINISH_ACTIVITY)]


@pytest.mark.parametrize(("express", "deleting_step"), STEP_OF_DELETES)
async def test_a_stopped_worker_hands_its_deletes_back_at_once(
    catalog: SqlCatalog,
    temporal_client: Client,
    s3: S3Store,
    stack: EmbeddedStack,
    express: bool,
    deleting_step: str,
) -> None:
    # One manifest of 40 files: planning cuts it into two chunks of 20 (four groups of 5 each).
    table = many_files_table(catalog, ("recovery",), f"sigterm_{express}", manifests=1, files=40)
    purges = PurgeClient(temporal_client, QUEUE)
    tuning = {
        "ICEPURGE_CHUNK_TARGET_FILES": "20",
        "ICEPURGE_DELETE_BATCH_FILES": "5",
        "ICEPURGE_SHUTDOWN_GRACE_SECONDS": "1",
    }
    with s3_proxy(stack.ports.s3) as (port, faults):
        faults.delete_delay = 1.5
        properties = through_proxy(s3.properties, port)
        leaving = _worker(stack, "recovery-term-0", **tuning)
        staying: ServiceProcess | None = None
        try:
            purge_id = await purges.start(
                request_for(table, properties, concurrency=1, chunk_window=1, express_lane=express)
            )
            await asyncio.wait_for(faults.deletes_reached(2), timeout=120)
            staying = _worker(stack, "recovery-term-1", **tuning)
            # Stopped right after a delete arrived: it takes 1.5 s, longer than the 1 s grace, so
            # the chunk can't finish in time however long the other worker took to start.
            await asyncio.wait_for(faults.deletes_reached(faults.delete_requests + 1), timeout=120)
            await asyncio.to_thread(leaving.stop, 30.0)
            report = await asyncio.wait_for(purges.wait(purge_id), timeout=240)
        finally:
            leaving.kill()
            if staying is not None:
                staying.stop()

    _assert_purged(report, s3, table)
    causes = await _retried_attempts(temporal_client, purge_id, deleting_step)
    assert causes, "the stopped worker's deletes should have been retried by the other worker"
    assert "timeout" not in causes, causes


@pytest.mark.parametrize(
    ("express", "finalizing_step"), [(False, FINALIZE_ACTIVITY), (True, PLAN_AND_FINISH_ACTIVITY)]
)
async def test_killed_finalize_resumes_after_the_groups_it_finished(
    catalog: SqlCatalog,
    temporal_client: Client,
    s3: S3Store,
    stack: EmbeddedStack,
    express: bool,
    finalizing_step: str,
) -> None:
    """On the express lane the kill comes after the table's manifests are deleted: the retry
    takes up the plan it kept, never planning again from what is left of the table."""
    table = many_files_table(catalog, ("recovery",), f"finalize_kill_{express}", manifests=12, files=1)
    manifests = {key_of(path) for path in s3.list(table.location()) if path.endswith("-m0.avro")}
    purges = PurgeClient(temporal_client, QUEUE)
    env = {"ICEPURGE_CHUNK_TARGET_FILES": "100", "ICEPURGE_DELETE_BATCH_FILES": "4"}
    with s3_proxy(stack.ports.s3) as (port, faults):
        faults.delete_delay = 1.0
        properties = through_proxy(s3.properties, port)
        worker = _worker(stack, "recovery-finalize-0", **env)
        try:
            purge_id = await purges.start(request_for(table, properties, express_lane=express))
            # The manifest lists' deletes have begun: finalize checkpointed its manifests group.
            while not any("/snap-" in key for key in faults.deleted_keys):
                await asyncio.sleep(0.05)
            worker.kill()
            worker = _worker(stack, "recovery-finalize-1", **env)
            # The killed attempt's heartbeat timeout has not passed yet (the one step that plans
            # and finishes says PLANNING until it ends).
            state = (await purges.status(purge_id)).state
            assert state is (PurgeState.PLANNING if express else PurgeState.FINALIZING)
            report = await asyncio.wait_for(purges.wait(purge_id), timeout=240)
        finally:
            worker.stop()

    _assert_purged(report, s3, table)
    sent = Counter(faults.deleted_keys)
    assert all(sent[key] == 1 for key in manifests), "the finished manifests group is not redone"
    assert await _retried_attempts(temporal_client, purge_id, finalizing_step)
    if express:
        assert report.status.counts.total().deleted == report.status.planned.files
