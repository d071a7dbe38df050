"""The Spark engine's standalone cluster across the tests' own hosts (tests.net_hosts): the
Master, two Workers and the icepurge worker (the driver) each on a host of its own, Temporal and
the store on the services host."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import time
from collections.abc import Iterator

import pytest

from icepurge.api.clients.temporal_client import PurgeClient
from icepurge.connection.connect import connect
from icepurge.contract.names import ERROR_STALE_ATTEMPT
from icepurge.contract.states import PurgeState
from icepurge.devstack.process import ServiceProcess
from icepurge.devstack.spark_services import SparkHost, standalone_master, standalone_worker
from icepurge.devstack.stack import EmbeddedStack
from icepurge.devstack.synthetic_table import TableShape, synthetic_table
from tests.fleet_stack import (
    QUEUE,
    assert_only_the_report_left,
    content_counted,
    fleet_stack,
    fleet_worker,
    needs_hosts,
)
from tests.net_hosts import NetHosts
from tests.purge_helpers import assert_counts_add_up, request_for
from tests.spark_master import alive_spark_workers
from tests.store import S3Store

# Its own time (about 110 s) goes to the engines tier, beside the other Spark clusters: `make test`
# stays clear of CI's limit.
pytestmark = [needs_hosts, pytest.mark.engines]

# Chunks of up to 1,000 files (a plan that ends before one is cut is cut in the chunk window's two
# pieces), ten keys to a task.
WORKER_SETTINGS = {"ICEPURGE_CHUNK_TARGET_FILES": "1000", "ICEPURGE_DELETE_BATCH_FILES": "10"}


@pytest.fixture(scope="module")
def fleet(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[EmbeddedStack, NetHosts]]:
    with fleet_stack(tmp_path_factory.mktemp("spark-fleet")) as made:
        yield made


SPARK_SHAPE = TableShape(manifests=8, files_per_manifest=50)
# Driver and cluster notice a silent executor or worker within seconds, not Spark's minutes.
SPARK_TIMEOUT_SECONDS = 15
# Long enough for a thawed task's next delete and checkpoint.
LATE_WORK_SECONDS = 5


async def test_a_spark_worker_host_cut_off_mid_chunk(fleet: tuple[EmbeddedStack, NetHosts]) -> None:
    """The standalone Master, two Spark Workers and the icepurge worker (the driver) on hosts of
    their own. Mid-chunk, one Spark Worker's host loses its link to the cluster (not to the store)
    and its executor's Python workers freeze: its tasks run again on the other Worker and the
    purge closes exactly. Thawed, the first copies carry on from where they stood, still cut off
    from the driver, and their late checkpoints are refused."""
    stack, hosts = fleet
    s3 = S3Store(stack.s3_properties)
    table = synthetic_table(stack.catalog("fleet"), ("fleet", "sparked"), SPARK_SHAPE)
    owned = s3.list(table.location())
    master_host, cut_host, spared_host, driver_host = (hosts.add() for _ in range(4))
    directory = stack.state_dir / "spark-fleet"
    master_port, master_ui_port = 7077, 8080
    master_url = f"spark://{hosts.address(master_host)}:{master_port}"
    master = standalone_master(
        directory / "master",
        master_port,
        master_ui_port,
        SparkHost(hosts.address(master_host), tuple(master_host.command([]))),
        f"-Dspark.worker.timeout={SPARK_TIMEOUT_SECONDS}",
    )
    spark_workers = [
        standalone_worker(
            directory / host.name,
            master_url,
            8081,
            cores=1,
            host=SparkHost(hosts.address(host), tuple(host.command([]))),
        )
        for host in (cut_host, spared_host)
    ]
    conf = {
        "spark.driver.host": hosts.address(driver_host),
        "spark.driver.bindAddress": hosts.address(driver_host),
        "spark.network.timeout": f"{SPARK_TIMEOUT_SECONDS}s",
        "spark.executor.heartbeatInterval": "3s",
        "spark.network.timeoutInterval": "5s",
        "spark.executor.memory": "1g",
        "spark.ui.enabled": "false",
    }
    settings = {
        **WORKER_SETTINGS,
        "ICEPURGE_SPARK_MASTER": master_url,
        "ICEPURGE_SPARK_CONF": json.dumps(conf),
        "SPARK_LOCAL_IP": hosts.address(driver_host),
    }
    client = await connect(stack.temporal_settings())
    purges = PurgeClient(client, QUEUE)
    driver: ServiceProcess | None = None
    try:
        master.start()
        for spark_worker in spark_workers:
            spark_worker.start()
        master_ui = f"http://{hosts.address(master_host)}:{master_ui_port}"
        deadline = time.monotonic() + 180
        while alive_spark_workers(master_ui) < 2:
            assert time.monotonic() < deadline, f"the Spark workers did not register; see {master.log_path}"
            await asyncio.sleep(1)
        driver = fleet_worker(stack, driver_host, settings)
        purge_id = await purges.start(
            request_for(
                table, stack.s3_properties, engine="spark", concurrency=1, bucket_requests_per_second=4.0
            )
        )
        deadline = time.monotonic() + 300
        while len(s3.list(table.location())) > len(owned) - 100:
            assert time.monotonic() < deadline, f"the chunk did not start deleting; see {driver.log_path}"
            assert (await purges.status(purge_id)).finished_at is None, await purges.status(purge_id)
            await asyncio.sleep(0.5)
        frozen = hosts.python_processes(cut_host)
        assert frozen, "no Python worker ran on the host to be cut off"
        for pid in frozen:
            os.kill(pid, signal.SIGSTOP)
        hosts.cut(cut_host)
        report = await asyncio.wait_for(purges.wait(purge_id), timeout=300)
        for pid in frozen:
            os.kill(pid, signal.SIGCONT)
        await asyncio.sleep(LATE_WORK_SECONDS)
        hosts.restore(cut_host)
    finally:
        for process in (driver, *spark_workers, master):
            if process is not None:
                process.stop()

    status = report.status
    assert status.state is PurgeState.SUCCEEDED, status
    assert status.engine == "spark"
    assert s3.list(table.location()) == set()
    assert_counts_add_up(status)
    assert content_counted(status) == SPARK_SHAPE.content_files
    assert_only_the_report_left(s3, status, "a cut-off task wrote after the chunk closed")
    executor_logs = "".join(
        path.read_text(errors="replace") for path in (directory / cut_host.name).rglob("stderr")
    )
    print(f"stale task writes refused on the cut-off host: {executor_logs.count(ERROR_STALE_ATTEMPT + ':')}")
