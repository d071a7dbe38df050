"""`icepurge worker` with several processes: both poll the queue and run purges, their metrics
come from the one address (each sample labelled with its process), a process that dies is started
again, SIGTERM stops them all, and a killed supervisor leaves no process behind."""

from __future__ import annotations

import asyncio
import os
import signal
import time
import uuid
from collections.abc import Callable
from pathlib import Path

import httpx
from pyiceberg.catalog.sql import SqlCatalog
from temporalio.client import Client

from icepurge.api.clients.temporal_client import PurgeClient
from icepurge.contract.states import PurgeState
from icepurge.devstack.free_ports import free_ports
from icepurge.devstack.process import ServiceProcess
from icepurge.devstack.stack import EmbeddedStack
from icepurge.worker.metrics_merge import LABEL
from icepurge.worker.processes import MIN_LIFETIME_SECONDS
from tests.purge_helpers import request_for
from tests.store import S3Store
from tests.tables import simple_table

QUEUE = "icepurge-worker-processes"


def _children(pid: int) -> list[int]:
    found = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        found += [int(child) for child in (task / "children").read_text().split()]
    return found


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().split()[2]
    except FileNotFoundError:
        return False
    return state != "Z"


def _wait_until(condition: Callable[[], bool], seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.2)


def _polling(worker: ServiceProcess) -> int:
    return worker.log_path.read_text(errors="replace").count("icepurge worker polling")


async def _identities(client: Client, purge_id: str) -> set[str]:
    history = await client.get_workflow_handle(purge_id).fetch_history()
    return {
        event.activity_task_started_event_attributes.identity
        for event in history.events
        if event.HasField("activity_task_started_event_attributes")
    }


async def test_two_processes_share_the_queue_one_metrics_address_and_stop_together(
    catalog: SqlCatalog, s3: S3Store, stack: EmbeddedStack, temporal_client: Client
) -> None:
    metrics = f"127.0.0.1:{free_ports(1)[0]}"
    worker = stack.worker_process(
        "two-processes",
        ICEPURGE_TASK_QUEUE=QUEUE,
        ICEPURGE_WORKER_PROCESSES="2",
        ICEPURGE_METRICS_ADDRESS=metrics,
    )
    worker.start()
    try:
        _wait_until(lambda: _polling(worker) == 2)
        polling_since = time.monotonic()
        supervisor = worker.pid
        assert supervisor is not None
        first = sorted(_children(supervisor))
        assert len(first) == 2

        purges = PurgeClient(temporal_client, QUEUE)
        tables = [
            simple_table(catalog, ("processes",), f"t{uuid.uuid4().hex[:6]}", appends=2) for _ in range(6)
        ]
        ids = [await purges.start(request_for(table, s3.properties)) for table in tables]
        identities: set[str] = set()
        for purge_id, table in zip(ids, tables, strict=True):
            assert (await purges.wait(purge_id)).status.state is PurgeState.SUCCEEDED
            assert s3.list(table.location()) == set()
            identities |= await _identities(temporal_client, purge_id)
        assert {identity.split("@")[0] for identity in identities} == {str(pid) for pid in first}

        text = (await asyncio.to_thread(httpx.get, f"http://{metrics}/metrics", timeout=10)).text
        assert f'{LABEL}="0"' in text and f'{LABEL}="1"' in text
        families = [line.split()[2] for line in text.splitlines() if line.startswith("# TYPE ")]
        assert families and len(families) == len(set(families)), "a metric family split in two groups"

        # A process that dies once it has run a while is started again; the other goes on.
        time.sleep(max(0.0, MIN_LIFETIME_SECONDS + 1 - (time.monotonic() - polling_since)))
        os.kill(first[0], signal.SIGKILL)
        _wait_until(lambda: len(_children(supervisor)) == 2 and first[0] not in _children(supervisor))
        assert "worker process 0 exited with -9" in worker.log_path.read_text(errors="replace")
        _wait_until(lambda: _polling(worker) == 3)
        second = _children(supervisor)

        os.kill(supervisor, signal.SIGTERM)
        _wait_until(lambda: not worker.running())
        assert "every worker process stopped" in worker.log_path.read_text(errors="replace")
        assert not any(_alive(pid) for pid in second)
    finally:
        worker.stop()


async def test_a_killed_supervisor_leaves_no_worker_process_behind(stack: EmbeddedStack) -> None:
    worker = stack.worker_process(
        "killed-supervisor", ICEPURGE_TASK_QUEUE=QUEUE, ICEPURGE_WORKER_PROCESSES="2"
    )
    worker.start()
    try:
        _wait_until(lambda: _polling(worker) == 2)
        assert worker.pid is not None
        children = _children(worker.pid)
        os.kill(worker.pid, signal.SIGKILL)
        _wait_until(lambda: not any(_alive(pid) for pid in children), seconds=20)
    finally:
        worker.kill()


async def test_a_process_that_dies_as_it_starts_stops_the_worker_with_a_reason(stack: EmbeddedStack) -> None:
    # Nothing answers there: each process fails to connect as it starts.
    worker = stack.worker_process(
        "unstartable",
        ICEPURGE_TASK_QUEUE=QUEUE,
        ICEPURGE_WORKER_PROCESSES="2",
        ICEPURGE_TEMPORAL_ADDRESS=f"127.0.0.1:{free_ports(1)[0]}",
    )
    worker.start()
    try:
        _wait_until(lambda: not worker.running(), seconds=90)
        log = worker.log_path.read_text(errors="replace")
        assert "s after it started: see its log above; every worker process stops" in log
    finally:
        worker.stop()


async def test_a_stop_of_the_whole_group_soon_after_the_start_is_a_clean_stop(stack: EmbeddedStack) -> None:
    """Ctrl-C of `make run` (SIGTERM to the process group) within the first seconds: the processes
    end before the supervisor may have heard its own signal, and that is no failed start."""
    worker = stack.worker_process("group-stop", ICEPURGE_TASK_QUEUE=QUEUE, ICEPURGE_WORKER_PROCESSES="2")
    worker.start()
    try:
        _wait_until(lambda: _polling(worker) == 2)
        worker.stop()
        log = worker.log_path.read_text(errors="replace")
        assert "every worker process stopped" in log
        assert "after it started" not in log
    finally:
        worker.stop()
