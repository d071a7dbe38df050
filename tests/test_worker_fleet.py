"""Workers on hosts of their own (network namespaces, tests.net_hosts), Temporal and the store on
the services host. A worker cut off from Temporal, but not from the store, may still be about to
write when the heartbeat timeout hands its chunk to a worker elsewhere: once that newer attempt
has touched the state location, the cut-off one writes nothing more and stops (its attempt is
fenced), and the purge closes exactly."""

from __future__ import annotations

import asyncio
import signal
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from temporalio.client import Client

from icepurge.api.clients.temporal_client import PurgeClient
from icepurge.connection.connect import connect
from icepurge.contract.counts import CONTENT_CATEGORIES
from icepurge.contract.names import ERROR_STALE_ATTEMPT
from icepurge.contract.states import PurgeState
from icepurge.devstack.ports import StackPorts
from icepurge.devstack.process import WORKER_READY, ServiceProcess
from icepurge.devstack.stack import STATE_BUCKET, EmbeddedStack, StackHosts
from icepurge.devstack.synthetic_table import TableShape, synthetic_table
from tests.net_hosts import Host, NetHosts, net_hosts, unavailable
from tests.paused_worker import FROZEN_AT_WRITE
from tests.purge_helpers import assert_counts_add_up, request_for
from tests.store import S3Store

QUEUE = "icepurge-fleet"
SHAPE = TableShape(manifests=8, files_per_manifest=50)
# One chunk of every file, deleted ten keys to a request at one request a second: the chunk
# runs for about 40 s, well past the heartbeat timeout (15 s) the cut outlasts.
WORKER_SETTINGS = {"ICEPURGE_CHUNK_TARGET_FILES": "1000", "ICEPURGE_DELETE_BATCH_FILES": "10"}
REQUESTS_PER_SECOND = 1.0

pytestmark = pytest.mark.skipif(unavailable() is not None, reason=str(unavailable()))


@pytest.fixture(scope="module")
def fleet(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[EmbeddedStack, NetHosts]]:
    with net_hosts() as hosts:
        stack = EmbeddedStack(
            state_dir=tmp_path_factory.mktemp("fleet"),
            ports=StackPorts.free(),
            hosts=StackHosts(temporal=hosts.temporal_address, store=hosts.store_address),
            snapshot_only_catalogs=("tests",),
        )
        stack.start()
        try:
            yield stack, hosts
        finally:
            stack.stop()


WORKER = ["icepurge.api.cli.main", "worker"]


def _worker(stack: EmbeddedStack, host: Host, module: list[str] = WORKER) -> ServiceProcess:
    worker = ServiceProcess(
        f"worker-{host.name}",
        host.command([sys.executable, "-m", *module]),
        stack.state_dir / "logs" / f"worker-{host.name}.log",
        env=stack.worker_env(ICEPURGE_TASK_QUEUE=QUEUE, **WORKER_SETTINGS),
    )
    worker.start()
    worker.wait_for_log(WORKER_READY)
    return worker


async def _chunk_attempt(client: Client, purge_id: str) -> int:
    description = await client.get_workflow_handle(purge_id).describe()
    pending = description.raw_description.pending_activities
    return max((activity.attempt for activity in pending), default=0)


def _log(worker: ServiceProcess) -> str:
    return Path(worker.log_path).read_text(errors="replace")


async def _log_says(worker: ServiceProcess, seconds: float, *texts: str) -> str:
    """The first of `texts` the worker's log holds, once it holds one."""
    deadline = time.monotonic() + seconds
    while not any(text in _log(worker) for text in texts):
        assert time.monotonic() < deadline, f"{worker.name} never logged {texts}: {_log(worker)[-3000:]}"
        await asyncio.sleep(0.2)
    return next(text for text in texts if text in _log(worker))


async def test_a_cut_off_worker_writes_nothing_once_its_chunk_was_retried_elsewhere(
    fleet: tuple[EmbeddedStack, NetHosts],
) -> None:
    """The cut-off worker freezes just before it saves a checkpoint and thaws after its chunk was
    retried elsewhere and the whole purge closed: that save would land in the plan folder
    finalize had emptied (and, had the retry still been running, overwrite its checkpoint)."""
    stack, hosts = fleet
    s3 = S3Store(stack.s3_properties)
    table = synthetic_table(stack.catalog("fleet"), ("fleet", "zombie"), SHAPE)
    owned = s3.list(table.location())
    others = (s3.list(f"s3://{STATE_BUCKET}/") | s3.list("s3://warehouse/")) - owned
    cut_off_host, other_host = hosts.add(), hosts.add()
    client = await connect(stack.temporal_settings())
    purges = PurgeClient(client, QUEUE)
    cut_off = _worker(stack, cut_off_host, ["tests.paused_worker"])
    elsewhere: ServiceProcess | None = None
    try:
        purge_id = await purges.start(
            request_for(
                table,
                stack.s3_properties,
                concurrency=1,
                chunk_window=1,
                bucket_requests_per_second=REQUESTS_PER_SECOND,
            )
        )
        deadline = time.monotonic() + 120
        while len(s3.list(table.location())) > len(owned) - 60:
            assert time.monotonic() < deadline, "the chunk did not start deleting"
            assert (await purges.status(purge_id)).finished_at is None, await purges.status(purge_id)
            await asyncio.sleep(0.5)
        elsewhere = _worker(stack, other_host)
        cut_off.signal(signal.SIGUSR1)
        await _log_says(cut_off, 30, FROZEN_AT_WRITE)
        hosts.cut(cut_off_host)
        cut_at = time.monotonic()
        while await _chunk_attempt(client, purge_id) < 2:
            assert time.monotonic() - cut_at < 90, "the chunk was not retried after the heartbeat timeout"
            await asyncio.sleep(0.5)
        retried_after = time.monotonic() - cut_at
        report = await asyncio.wait_for(purges.wait(purge_id), timeout=180)
        cut_off.signal(signal.SIGCONT)
        # The fence stops it, or the SDK's own cancellation (the heartbeat timeout passed on the
        # worker too) reaches its thread first: either way, before it writes.
        stopped_by = await _log_says(cut_off, 60, ERROR_STALE_ATTEMPT, "CancelledError")
        hosts.restore(cut_off_host)
    finally:
        for worker in (cut_off, elsewhere):
            if worker is not None:
                worker.stop()

    status = report.status
    assert status.state is PurgeState.SUCCEEDED
    assert s3.list(table.location()) == set()
    assert others <= s3.list(f"s3://{STATE_BUCKET}/") | s3.list("s3://warehouse/")
    assert_counts_add_up(status)
    content = sum(
        status.counts.of(category).deleted + status.counts.of(category).already_missing
        for category in CONTENT_CATEGORIES
    )
    assert content == SHAPE.content_files
    assert status.report_location is not None
    plan_folder = status.report_location.rsplit("/", 1)[0]
    assert s3.list(plan_folder + "/") == {status.report_location}, (
        "the cut-off attempt wrote state after the purge cleaned up"
    )
    print(f"chunk retried {retried_after:.1f} s after the cut; the thawed attempt stopped by {stopped_by}")
