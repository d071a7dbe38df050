"""Workers on hosts of their own (network namespaces, tests.net_hosts), Temporal and the store on
the services host. A worker cut off from Temporal, but not from the store, may still be about to
write when the heartbeat timeout hands its chunk to a worker elsewhere: once that newer attempt
has touched the state location, the cut-off one writes nothing more and stops (its attempt is
fenced), and the purge closes exactly."""

from __future__ import annotations

import asyncio
import json
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from pyiceberg.catalog.sql import SqlCatalog
from temporalio.client import Client

from icepurge.api.clients.temporal_client import PurgeClient
from icepurge.connection.connect import connect
from icepurge.contract.names import ERROR_STALE_ATTEMPT
from icepurge.contract.namespace_status import NamespacePurgeState
from icepurge.contract.states import PurgeState
from icepurge.devstack.catalog_env import pyiceberg_catalog_env
from icepurge.devstack.free_ports import free_ports
from icepurge.devstack.postgres import PostgresServer
from icepurge.devstack.process import ServiceProcess
from icepurge.devstack.small_tables import create_demo_table
from icepurge.devstack.stack import STATE_BUCKET, EmbeddedStack
from icepurge.devstack.synthetic_table import TableShape, synthetic_table
from tests.api_server import token_file
from tests.fleet_stack import (
    QUEUE,
    assert_only_the_report_left,
    content_counted,
    fleet_stack,
    fleet_worker,
    log_of,
    needs_hosts,
)
from tests.net_hosts import Host, NetHosts
from tests.paused_worker import FROZEN_AT_WRITE
from tests.purge_helpers import assert_counts_add_up, request_for, status_when
from tests.store import S3Store

SHAPE = TableShape(manifests=8, files_per_manifest=50)
# One chunk of every file, deleted ten keys to a request at one request a second: the chunk
# runs for about 40 s, well past the heartbeat timeout (15 s) the cut outlasts.
WORKER_SETTINGS = {"ICEPURGE_CHUNK_TARGET_FILES": "1000", "ICEPURGE_DELETE_BATCH_FILES": "10"}
REQUESTS_PER_SECOND = 1.0

pytestmark = needs_hosts


@pytest.fixture(scope="module")
def fleet(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[EmbeddedStack, NetHosts]]:
    with fleet_stack(tmp_path_factory.mktemp("fleet")) as made:
        yield made


async def _chunk_attempt(client: Client, purge_id: str) -> int:
    description = await client.get_workflow_handle(purge_id).describe()
    pending = description.raw_description.pending_activities
    return max((activity.attempt for activity in pending), default=0)


async def _log_says(worker: ServiceProcess, seconds: float, *texts: str) -> str:
    """The first of `texts` the worker's log holds, once it holds one."""
    deadline = time.monotonic() + seconds
    while not any(text in log_of(worker) for text in texts):
        assert time.monotonic() < deadline, f"{worker.name} never logged {texts}: {log_of(worker)[-3000:]}"
        await asyncio.sleep(0.2)
    return next(text for text in texts if text in log_of(worker))


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
    cut_off = fleet_worker(stack, cut_off_host, WORKER_SETTINGS, ["tests.paused_worker"])
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
        elsewhere = fleet_worker(stack, other_host, WORKER_SETTINGS)
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
    assert content_counted(status) == SHAPE.content_files
    assert_only_the_report_left(s3, status, "the cut-off attempt wrote state after the purge cleaned up")
    print(f"chunk retried {retried_after:.1f} s after the cut; the thawed attempt stopped by {stopped_by}")


FLEET_CATALOG = "fleet"
BIG = TableShape(manifests=100, files_per_manifest=500)
SMALL_TABLES = 50
# The big purge's chunks of 1,000 files go out a quarter of them to a request, at most eight
# requests a second on each worker: long enough for the faults to land mid-purge.
FLEET_SETTINGS = {"ICEPURGE_CHUNK_TARGET_FILES": "1000", "ICEPURGE_DELETE_BATCH_FILES": "250"}
BIG_RATE = "8"
CUT_SECONDS = 25
CLOSE_BOUND_SECONDS = 420


def _cli(host: Host, api_port: int, *args: str) -> str:
    """The operator's CLI on the API's host, through the API."""
    done = subprocess.run(
        host.command([sys.executable, "-m", "icepurge.api.cli.main", *args]),
        capture_output=True,
        text=True,
        timeout=120,
        env={
            "PATH": "/usr/sbin:/usr/bin:/bin",
            "ICEPURGE_API_URL": f"http://127.0.0.1:{api_port}",
            "ICEPURGE_API_TOKEN": "admin-token",
        },
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


@pytest.fixture(scope="module")
def fleet_catalog(fleet: tuple[EmbeddedStack, NetHosts]) -> Iterator[dict[str, str]]:
    """A SQL catalog on PostgreSQL on the services host, reached over the store's network."""
    stack, hosts = fleet
    postgres = PostgresServer(
        Path(tempfile.mkdtemp(prefix="icepurge-fleet-postgres-")), free_ports(1)[0], host=hosts.store_address
    )
    postgres.start()
    try:
        yield {**stack.catalog_properties(FLEET_CATALOG), "uri": postgres.sqlalchemy_uri}
    finally:
        postgres.stop()
        shutil.rmtree(postgres.data_dir, ignore_errors=True)


async def test_a_fleet_loses_a_host_and_nothing_else(
    fleet: tuple[EmbeddedStack, NetHosts], fleet_catalog: dict[str, str]
) -> None:
    """Three worker hosts and an API host; Temporal, the store and the catalog (PostgreSQL) on
    the services host. While a 50,000-file purge (continuing as new) and a namespace purge of 50
    tables run, one worker host is cut off from everything past the heartbeat timeout and brought
    back, another worker is SIGKILLed, the third keeps going."""
    stack, hosts = fleet
    s3 = S3Store(stack.s3_properties)
    catalog = SqlCatalog(
        FLEET_CATALOG, **{key: value for key, value in fleet_catalog.items() if key != "type"}
    )
    began = time.monotonic()
    big = synthetic_table(catalog, ("fleet_big", "events"), BIG)
    print(f"big table written in {time.monotonic() - began:.0f} s")
    smalls = [create_demo_table(catalog, ("fleet_small",), f"t{index:02d}") for index in range(SMALL_TABLES)]
    kept = create_demo_table(catalog, ("fleet_kept",), "stays")
    print(f"all tables written in {time.monotonic() - began:.0f} s")
    everything = s3.list("s3://warehouse/")
    owned = {uri for table in (big, *smalls) for uri in s3.list(table.location() + "/")}
    catalog_env = pyiceberg_catalog_env(FLEET_CATALOG, fleet_catalog)
    settings = {**FLEET_SETTINGS, **catalog_env}
    cut_host, killed_host, steady_host, api_host = (hosts.add() for _ in range(4))
    workers = [fleet_worker(stack, host, settings) for host in (cut_host, killed_host, steady_host)]
    api_port = 8000
    api = ServiceProcess(
        f"api-{api_host.name}",
        api_host.command([sys.executable, "-m", "icepurge.api.cli.main", "api"]),
        stack.state_dir / "logs" / f"api-{api_host.name}.log",
        env={
            **stack.worker_env(ICEPURGE_TASK_QUEUE=QUEUE, **catalog_env),
            "ICEPURGE_API_PORT": str(api_port),
            "ICEPURGE_API_AUTH_FILE": str(token_file(stack.state_dir)),
        },
    )
    api.start()
    client = await connect(stack.temporal_settings())
    purges = PurgeClient(client, QUEUE)
    faults: list[str] = []
    try:
        api.wait_for_log("Application startup complete", timeout=120)
        big_id = _cli(api_host, api_port, "purge", "table", FLEET_CATALOG, "fleet_big", "events")
        _cli(api_host, api_port, "purge", "rate", big_id, BIG_RATE)
        namespace_id = _cli(api_host, api_port, "purge", "namespace", FLEET_CATALOG, "fleet_small")
        started = time.monotonic()
        await status_when(purges, big_id, lambda status: status.files_done >= 5_000)
        hosts.cut(cut_host, store_too=True)
        workers[1].kill()
        faults += [f"{cut_host.name} cut off for {CUT_SECONDS} s", f"{killed_host.name}'s worker SIGKILLed"]
        await asyncio.sleep(CUT_SECONDS)
        hosts.restore(cut_host)
        restored = time.monotonic()
        big_report = await asyncio.wait_for(purges.wait(big_id), timeout=CLOSE_BOUND_SECONDS)
        namespace_report = await asyncio.wait_for(
            purges.namespaces.wait(namespace_id), timeout=CLOSE_BOUND_SECONDS
        )
        closed = time.monotonic()
        listed = _cli(api_host, api_port, "purge", "status", namespace_id)
    finally:
        for process in (*workers, api):
            process.stop()

    big_status = big_report.status
    assert big_status.state is PurgeState.SUCCEEDED, big_status
    assert big_status.run_count >= 2
    assert_counts_add_up(big_status)
    assert content_counted(big_status) == BIG.content_files
    namespace = namespace_report.status
    assert namespace.state is NamespacePurgeState.SUCCEEDED, namespace
    assert namespace.tables_done == SMALL_TABLES
    assert json.loads(listed)["state"] == NamespacePurgeState.SUCCEEDED
    left = s3.list("s3://warehouse/")
    leaked = owned & left
    wrongly_deleted = (everything - owned) - left
    assert leaked == set()
    assert wrongly_deleted == set()
    assert catalog.load_table(("fleet_kept", "stays")).metadata_location == kept.metadata_location
    stale = sum(log_of(worker).count(f"{ERROR_STALE_ATTEMPT}:") for worker in workers)
    drift = big_status.files_done - big_status.files_total
    row = [
        "; ".join(faults),
        f"{len(owned)} ({BIG.content_files:,} + {SMALL_TABLES} tables)",
        str(len(leaked)),
        str(len(wrongly_deleted)),
        str(drift),
        str(stale),
        f"{closed - restored:.0f} s after the link came back ({closed - started:.0f} s in all)",
    ]
    print("\n| faults | files | leaked | wrongly deleted | count drift | stale writes refused | closed |")
    print("|---|---|---|---|---|---|---|")
    print("| " + " | ".join(row) + " |")
