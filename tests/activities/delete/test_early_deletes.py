"""Deletes start while planning still reads manifests (issue 14, part 2), and the order that keeps
a purge safe holds: no manifest is deleted before the files it lists, no metadata file before
planning has read everything it reaches, the current metadata file last. A worker killed while
early chunks delete loses nothing and counts nothing twice.

Manifest reads go through a proxy that slows each GET, so planning takes seconds; the proxy's
timeline orders what the store saw."""

from __future__ import annotations

import asyncio
import time

import pytest
from pyiceberg.catalog.sql import SqlCatalog
from pyiceberg.table import Table
from temporalio.client import Client

from icepurge.api.clients.temporal_client import PurgeClient
from icepurge.contract.states import PurgeState
from icepurge.contract.status import PurgeReport
from icepurge.devstack.process import ServiceProcess
from icepurge.devstack.s3_proxy import FaultPlan, s3_proxy, through_proxy
from icepurge.devstack.stack import EmbeddedStack
from icepurge.devstack.synthetic_table import TableShape, synthetic_table
from tests.purge_helpers import assert_counts_add_up, eventually, request_for
from tests.store import S3Store, key_of

QUEUE = "icepurge-early-deletes"
SHAPE = TableShape(manifests=60, files_per_manifest=10, snapshots=3, delete_files_per_snapshot=4)
# Twenty files a chunk: planning cuts one after every other manifest.
TUNING = {
    "ICEPURGE_TASK_QUEUE": QUEUE,
    "ICEPURGE_CHUNK_TARGET_FILES": "20",
    # A small table: the projection alone would not overlap it (its 612 entries project to 20 ms).
    "ICEPURGE_OVERLAP_MIN_SECONDS": "0",
}
READ_DELAY = 0.4


def _worker(stack: EmbeddedStack, name: str) -> ServiceProcess:
    worker = stack.worker_process(name, **TUNING)
    worker.start()
    worker.wait_for_log("icepurge worker polling")
    return worker


def _content(key: str) -> bool:
    return "/data/" in key


def _assert_purged(report: PurgeReport, s3: S3Store, table: Table) -> None:
    assert report.status.state is PurgeState.SUCCEEDED, report.status.last_error
    assert s3.list(table.location()) == set()
    assert_counts_add_up(report.status)
    assert report.status.planned.content_files == SHAPE.content_files


def _last_read(faults: FaultPlan) -> float:
    return max(at for at, kind, _ in faults.timeline if kind == "read")


@pytest.mark.parametrize("overlap", [True, False], ids=["while_planning", "after_planning"])
async def test_deletes_start_while_planning_and_finalize_keeps_its_order(
    catalog: SqlCatalog, temporal_client: Client, s3: S3Store, stack: EmbeddedStack, overlap: bool
) -> None:
    table = synthetic_table(catalog, ("early", f"ordered_{overlap}"), SHAPE)
    current = key_of(table.metadata_location)
    purges = PurgeClient(temporal_client, QUEUE)
    seen: list[tuple[PurgeState, int]] = []
    worker = _worker(stack, "early-ordered")
    try:
        with s3_proxy(stack.ports.s3) as (port, faults):
            faults.read_delay = READ_DELAY
            request = request_for(
                table, through_proxy(s3.properties, port), delete_while_planning=overlap, express_lane=False
            )
            purge_id = await purges.start(request)
            waiting = asyncio.ensure_future(purges.wait(purge_id))
            while not waiting.done():
                status = await purges.status(purge_id)
                seen.append((status.state, status.files_done))
                await asyncio.sleep(0.1)
            report = await waiting
    finally:
        worker.stop()

    _assert_purged(report, s3, table)
    deletes = [(at, key) for at, kind, key in faults.timeline if kind == "delete"]
    content = [at for at, key in deletes if _content(key)]
    manifests = [at for at, key in deletes if key.endswith(".avro")]
    metadata = [(at, key) for at, key in deletes if key.endswith(".metadata.json")]
    planning_ended = _last_read(faults)
    early = [at for at in content if at < planning_ended]
    deleting_while_planning = any(state is PurgeState.PLANNING and done > 0 for state, done in seen)
    if overlap:
        assert early, "no content file was deleted before planning's last read"
        assert deleting_while_planning, seen
    else:
        assert not early and not deleting_while_planning, "deletes began before the plan was complete"
    # A manifest (or a manifest list) goes only once every content file is gone.
    assert manifests and min(manifests) > max(content)
    # A metadata file goes only after planning read all it reaches; the current one goes last.
    assert metadata and min(at for at, _ in metadata) > max(planning_ended, *manifests)
    assert deletes[-1][1] == current
    assert sorted(key for _, key in deletes if _content(key)) == sorted(
        {key for _, key in deletes if _content(key)}
    ), "a content file was sent twice"


async def test_a_worker_killed_while_early_chunks_delete_loses_and_doubles_nothing(
    catalog: SqlCatalog, temporal_client: Client, s3: S3Store, stack: EmbeddedStack
) -> None:
    table = synthetic_table(catalog, ("early", "killed"), SHAPE)
    purges = PurgeClient(temporal_client, QUEUE)
    worker = _worker(stack, "early-killed-0")
    try:
        with s3_proxy(stack.ports.s3) as (port, faults):
            faults.read_delay = READ_DELAY
            purge_id = await purges.start(
                request_for(table, through_proxy(s3.properties, port), express_lane=False)
            )
            await asyncio.wait_for(faults.deletes_reached(3), timeout=120)
            worker.kill()
            killed_at = time.monotonic()
            worker = _worker(stack, "early-killed-1")
            report = await asyncio.wait_for(purges.wait(purge_id), timeout=240)
    finally:
        worker.stop()

    assert any(kind == "read" and at > killed_at for at, kind, _ in faults.timeline), (
        "the kill came after planning had ended"
    )
    # Each distinct content file is counted once, in one chunk, though planning ran twice.
    _assert_purged(report, s3, table)


async def test_a_pause_while_planning_stops_the_early_chunks_until_resumed(
    catalog: SqlCatalog, temporal_client: Client, s3: S3Store, stack: EmbeddedStack
) -> None:
    table = synthetic_table(catalog, ("early", "paused"), SHAPE)
    purges = PurgeClient(temporal_client, QUEUE)
    worker = _worker(stack, "early-paused")
    try:
        with s3_proxy(stack.ports.s3) as (port, faults):
            faults.read_delay = READ_DELAY
            purge_id = await purges.start(
                request_for(table, through_proxy(s3.properties, port), express_lane=False)
            )
            await asyncio.wait_for(faults.deletes_reached(1), timeout=120)
            paused = await purges.pause(purge_id)
            assert paused.state is PurgeState.PLANNING and paused.paused
            # The plan completes, and the purge waits in PAUSED with its chunks stopped.
            status = await eventually(
                lambda: purges.status(purge_id), lambda status: status.state is PurgeState.PAUSED
            )
            sent = faults.delete_requests
            await asyncio.sleep(2)
            assert faults.delete_requests == sent, "a chunk went on deleting while the purge was paused"
            assert status.files_done < SHAPE.content_files
            await purges.resume(purge_id)
            report = await asyncio.wait_for(purges.wait(purge_id), timeout=240)
    finally:
        worker.stop()

    _assert_purged(report, s3, table)
