"""The Spark engine on clusters started from PySpark's own scripts: a standalone Master and
Worker (executors in their own JVMs and Python workers), and a Spark Connect server. No secret
in the Spark UI's environment, the event log, or any driver, executor or worker log. In the
engines tier: clusters as users run them, and ~90 s that `make test` can't spare."""

from __future__ import annotations

import asyncio
import json
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from pyiceberg.catalog.sql import SqlCatalog
from temporalio.client import Client

from icepurge.api.clients.errors import PurgeFailedError
from icepurge.api.clients.temporal_client import PurgeClient
from icepurge.contract.states import PurgeState
from icepurge.devstack.free_ports import free_ports
from icepurge.devstack.process import ServiceFailedError, ServiceProcess
from icepurge.devstack.s3_proxy import s3_proxy, through_proxy
from icepurge.devstack.spark_services import connect_server, standalone_master, standalone_worker
from icepurge.devstack.stack import EmbeddedStack
from tests.expected import drop_table_data_set, history_set
from tests.purge_helpers import purge, request_for
from tests.spark_master import alive_spark_workers
from tests.store import S3Store
from tests.tables import many_files_table, rich_table

pytestmark = pytest.mark.engines


def _json(url: str) -> Any:
    # The driver's UI answers late while both cores are busy (a clean-clone `make test` once
    # timed out at 5 s): the reading waits, it measures nothing.
    with urllib.request.urlopen(url, timeout=60) as response:  # loopback http only
        return json.load(response)


def _wait_for_alive_worker(master_ui_port: int, master: ServiceProcess) -> None:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if alive_spark_workers(f"http://127.0.0.1:{master_ui_port}") >= 1:
            return
        time.sleep(0.5)
    raise ServiceFailedError(f"no Spark worker registered with the master; see {master.log_path}")


@pytest.fixture(scope="module")
def standalone(stack: EmbeddedStack) -> Iterator[tuple[str, Path]]:
    """A Master and a Worker with two cores; yields the master URL and the cluster's directory."""
    master_port, master_ui, worker_ui = free_ports(3)
    directory = stack.state_dir / "spark-standalone"
    master = standalone_master(directory, master_port, master_ui)
    worker = standalone_worker(directory, f"spark://127.0.0.1:{master_port}", worker_ui, cores=2)
    try:
        master.start()
        master.wait_for_port(master_port, timeout=120)
        worker.start()
        _wait_for_alive_worker(master_ui, master)
        yield f"spark://127.0.0.1:{master_port}", directory
    finally:
        worker.stop()
        master.stop()


def _files_under(directory: Path) -> list[Path]:
    return [path for path in directory.rglob("*") if path.is_file()]


async def test_a_purge_on_a_standalone_cluster_with_no_secret_in_spark(
    catalog: SqlCatalog,
    temporal_client: Client,
    s3: S3Store,
    stack: EmbeddedStack,
    standalone: tuple[str, Path],
) -> None:
    master_url, cluster_dir = standalone
    event_log = stack.state_dir / "spark-events"
    event_log.mkdir(exist_ok=True)
    (ui_port,) = free_ports(1)
    conf = {
        "spark.eventLog.enabled": "true",
        "spark.eventLog.dir": event_log.as_uri(),
        "spark.ui.port": str(ui_port),
        "spark.executor.memory": "1g",
    }
    queue = "icepurge-standalone"
    worker = stack.worker_process(
        "standalone-worker",
        ICEPURGE_TASK_QUEUE=queue,
        ICEPURGE_CHUNK_TARGET_FILES="40",
        ICEPURGE_SPARK_MASTER=master_url,
        ICEPURGE_SPARK_CONF=json.dumps(conf),
    )
    table = rich_table(catalog, ("cluster",), "standalone")
    expected = drop_table_data_set(table.io, table.metadata_location) | history_set(
        table.io, table.metadata_location
    )
    before = s3.list(table.location())
    worker.start()
    try:
        request = request_for(table, s3.properties, engine="spark")
        report = await asyncio.wait_for(purge(PurgeClient(temporal_client, queue), request), timeout=300)
        application = _json(f"http://127.0.0.1:{ui_port}/api/v1/applications")[0]["id"]
        environment = json.dumps(
            _json(f"http://127.0.0.1:{ui_port}/api/v1/applications/{application}/environment")
        )
    finally:
        worker.stop()

    assert report.status.state is PurgeState.SUCCEEDED
    assert report.status.engine == "spark"
    assert s3.list(table.location()) == set()
    assert before == expected & before
    # The tasks ran in executors the standalone Worker launched, not in the driver.
    executor_logs = [path for path in _files_under(cluster_dir / "work") if path.name == "stderr"]
    assert executor_logs
    secret = s3.properties["s3.secret-access-key"]
    assert secret not in environment
    assert "spark.eventLog.dir" in environment
    for log in [*_files_under(event_log), *_files_under(cluster_dir), worker.log_path]:
        assert secret not in log.read_text(errors="replace"), log


@dataclass(frozen=True)
class ConnectServer:
    url: str
    ui_port: int

    def jobs(self) -> list[dict[str, Any]]:
        application = _json(f"http://127.0.0.1:{self.ui_port}/api/v1/applications")[0]["id"]
        jobs: list[dict[str, Any]] = _json(
            f"http://127.0.0.1:{self.ui_port}/api/v1/applications/{application}/jobs"
        )
        return jobs


@pytest.fixture(scope="module")
def connect(stack: EmbeddedStack) -> Iterator[ConnectServer]:
    port, ui_port = free_ports(2)
    conf = {"spark.ui.port": str(ui_port)}
    server = connect_server(stack.state_dir / "spark-connect", port, "local[2,4]", conf)
    try:
        server.start()
        server.wait_for_port(port, timeout=120)
        yield ConnectServer(f"sc://127.0.0.1:{port}", ui_port)
    finally:
        server.stop()


@pytest.fixture(scope="module")
def connect_worker(stack: EmbeddedStack, connect: ConnectServer) -> Iterator[tuple[str, ConnectServer]]:
    """An icepurge worker using the Connect server; yields its task queue and the server."""
    queue = "icepurge-connect"
    worker = stack.worker_process(
        "connect-worker",
        ICEPURGE_TASK_QUEUE=queue,
        ICEPURGE_CHUNK_TARGET_FILES="40",
        # Small bulk requests: a slowed-down chunk then runs long enough to be cancelled mid-job.
        ICEPURGE_DELETE_BATCH_FILES="5",
        ICEPURGE_SPARK_MASTER=connect.url,
    )
    worker.start()
    try:
        yield queue, connect
    finally:
        worker.stop()


async def test_a_purge_over_spark_connect(
    catalog: SqlCatalog, temporal_client: Client, s3: S3Store, connect_worker: tuple[str, ConnectServer]
) -> None:
    queue, _ = connect_worker
    table = rich_table(catalog, ("cluster",), "connect")
    expected = drop_table_data_set(table.io, table.metadata_location) | history_set(
        table.io, table.metadata_location
    )
    before = s3.list(table.location())

    request = request_for(table, s3.properties, engine="spark")
    report = await asyncio.wait_for(purge(PurgeClient(temporal_client, queue), request), timeout=300)

    assert report.status.state is PurgeState.SUCCEEDED
    assert report.status.engine == "spark"
    assert s3.list(table.location()) == set()
    assert before == expected & before


async def _running_jobs(server: ConnectServer) -> set[int]:
    while True:
        running = {job["jobId"] for job in server.jobs() if job["status"] == "RUNNING"}
        if running:
            return running
        await asyncio.sleep(0.2)


async def _jobs_failed(server: ConnectServer, jobs: set[int]) -> None:
    while any(job["status"] != "FAILED" for job in server.jobs() if job["jobId"] in jobs):
        await asyncio.sleep(0.2)


async def test_cancelling_interrupts_the_connect_operation(
    catalog: SqlCatalog,
    temporal_client: Client,
    s3: S3Store,
    stack: EmbeddedStack,
    connect_worker: tuple[str, ConnectServer],
) -> None:
    queue, server = connect_worker
    table = many_files_table(catalog, ("cluster",), "connect_cancel", manifests=6, files=10)
    purges = PurgeClient(temporal_client, queue)
    with s3_proxy(stack.ports.s3) as (port, faults):
        faults.delete_delay = 3.0
        properties = through_proxy(s3.properties, port)
        purge_id = await purges.start(request_for(table, properties, engine="spark", concurrency=1))
        while not faults.delete_times:
            await asyncio.sleep(0.1)
        running = await asyncio.wait_for(_running_jobs(server), timeout=60)
        await temporal_client.get_workflow_handle(purge_id).cancel()
        with pytest.raises(PurgeFailedError, match="CANCELLED"):
            await asyncio.wait_for(purges.wait(purge_id), timeout=60)
        # The server cancels the interrupted operation's jobs "within seconds".
        await asyncio.wait_for(_jobs_failed(server, running), timeout=15)
        # Interrupted tasks' Python workers are killed after spark.python.task.killTimeout (2 s).
        await asyncio.sleep(5)
        deletes_after_cancel = len(faults.delete_times)
        await asyncio.sleep(5)
        assert len(faults.delete_times) == deletes_after_cancel
    assert (await purges.status(purge_id)).state is PurgeState.CANCELLED
    assert s3.list(table.location())
