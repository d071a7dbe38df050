"""icepurge on a Temporal cluster as operators run one (tests/temporal_cluster.py): four services
as separate processes on hosts of their own, PostgreSQL, two frontends behind nginx. While a
50,000-file purge and a namespace purge by name run, the history service is SIGKILLed and started
again, matching is restarted, and one frontend's host is cut off: both purges finish exact, and
close within CLOSE_BOUND_SECONDS of their start."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator

import pytest
from google.protobuf.duration_pb2 import Duration
from pyiceberg.catalog.sql import SqlCatalog
from temporalio.api.workflowservice.v1 import DescribeNamespaceRequest, RegisterNamespaceRequest
from temporalio.client import Client
from temporalio.service import RPCError

from icepurge.api.clients.temporal_client import PurgeClient
from icepurge.api.clients.temporal_namespace_client import namespace_request
from icepurge.api.server.admin_setup import ensure_search_attributes
from icepurge.connection.connect import connect
from icepurge.connection.errors import TemporalRefusedError, TemporalUnreachableError
from icepurge.connection.settings import TemporalSettings
from icepurge.contract.namespace_status import NamespacePurgeState
from icepurge.contract.states import PurgeState
from icepurge.devstack.catalog_env import pyiceberg_catalog_env
from icepurge.devstack.grpc_tls_proxy import nginx_missing
from icepurge.devstack.process import ServiceProcess
from icepurge.devstack.small_tables import create_demo_table
from icepurge.devstack.stack import EmbeddedStack
from icepurge.devstack.synthetic_table import TableShape, synthetic_table
from tests.fleet_stack import QUEUE, content_counted, fleet_stack, fleet_worker, needs_hosts
from tests.net_hosts import NetHosts
from tests.purge_helpers import assert_counts_add_up, eventually, request_for, status_when
from tests.store import S3Store
from tests.temporal_cluster import TemporalCluster, cluster_binaries, temporal_cluster

BIG = TableShape(manifests=100, files_per_manifest=500)
SMALL_TABLES = 20
CATALOG = "lake"
# Chunks of 1,000 files, 250 keys a request, 4 requests a second: ~50 s of deletes, long enough
# for the three faults to land mid-purge.
WORKER_SETTINGS = {"ICEPURGE_CHUNK_TARGET_FILES": "1000", "ICEPURGE_DELETE_BATCH_FILES": "250"}
RATE = 4.0
HISTORY_DOWN_SECONDS = 5
CLOSE_BOUND_SECONDS = 300

# A tier of its own beside the engines': the server is built once into the tools cache (`make
# temporal-cluster`, several minutes on two cores), and the run takes minutes.
pytestmark = [needs_hosts, pytest.mark.engines]


@pytest.fixture(scope="module")
def cluster(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[EmbeddedStack, NetHosts, TemporalCluster]]:
    binaries = cluster_binaries()
    if binaries is None:
        pytest.skip("no Temporal server built: `make temporal-cluster` builds it (`make test` does)")
    missing = nginx_missing()
    if missing:
        pytest.skip(missing)
    with (
        fleet_stack(tmp_path_factory.mktemp("cluster-stack")) as (stack, hosts),
        temporal_cluster(binaries, tmp_path_factory.mktemp("cluster"), hosts) as running,
    ):
        yield stack, hosts, running


async def _client(stack: EmbeddedStack, cluster: TemporalCluster) -> Client:
    """The cluster's default namespace registered (once the frontends answer), icepurge's search
    attributes in it, and a client of it."""
    settings = stack.temporal_settings().model_copy(update={"temporal_address": cluster.address})
    client = await eventually(lambda: _connected(settings), lambda client: client is not None, seconds=120)
    assert client is not None
    try:
        await client.workflow_service.register_namespace(
            RegisterNamespaceRequest(
                namespace=client.namespace, workflow_execution_retention_period=Duration(seconds=86_400)
            )
        )
    except RPCError as error:
        assert "already" in str(error).lower(), error

    async def known() -> bool:
        try:
            await client.workflow_service.describe_namespace(
                DescribeNamespaceRequest(namespace=client.namespace)
            )
            await ensure_search_attributes(client, client.namespace)
        except RPCError:
            return False
        return True

    await eventually(known, bool, seconds=60)
    return client


async def _connected(settings: TemporalSettings) -> Client | None:
    try:
        return await connect(settings, warn_plaintext=False)
    except (TemporalUnreachableError, TemporalRefusedError):
        return None


async def test_purges_survive_a_history_kill_a_matching_restart_and_a_frontend_cut_off(
    cluster: tuple[EmbeddedStack, NetHosts, TemporalCluster],
) -> None:
    stack, hosts, running = cluster
    s3 = S3Store(stack.s3_properties)
    catalog = SqlCatalog(
        CATALOG, **{k: v for k, v in stack.catalog_properties(CATALOG).items() if k != "type"}
    )
    big = synthetic_table(catalog, ("cluster_big", "events"), BIG)
    smalls = [
        create_demo_table(catalog, ("cluster_small",), f"t{index:02d}") for index in range(SMALL_TABLES)
    ]
    owned = {uri for table in (big, *smalls) for uri in s3.list(table.location() + "/")}
    everything = s3.list("s3://warehouse/")
    client = await _client(stack, running)
    settings = {
        **WORKER_SETTINGS,
        **pyiceberg_catalog_env(CATALOG, stack.catalog_properties(CATALOG)),
        "ICEPURGE_TEMPORAL_ADDRESS": running.address,
    }
    workers: list[ServiceProcess] = [fleet_worker(stack, hosts.add(), settings) for _ in range(2)]
    purges = PurgeClient(client, QUEUE)
    try:
        started = time.monotonic()
        big_id = await purges.start(request_for(big, s3.properties, bucket_requests_per_second=RATE))
        namespace_id = await purges.namespaces.start(
            namespace_request(CATALOG, ["cluster_small"], requested_by="cluster", max_concurrent_tables=2)
        )
        await status_when(purges, big_id, lambda status: status.files_done >= 5_000)
        faults = [f"history SIGKILLed at {time.monotonic() - started:.0f} s"]
        (history,) = running.of("history")
        history.process.kill()
        await asyncio.sleep(HISTORY_DOWN_SECONDS)
        running.restart(history)
        await status_when(purges, big_id, lambda status: status.files_done >= 20_000)
        faults.append(f"matching restarted at {time.monotonic() - started:.0f} s")
        (matching,) = running.of("matching")
        matching.process.stop()
        running.restart(matching)
        await status_when(purges, big_id, lambda status: status.files_done >= 30_000)
        faults.append(f"a frontend's host cut off at {time.monotonic() - started:.0f} s")
        hosts.cut(running.of("frontend")[0].host, store_too=True)
        big_report = await asyncio.wait_for(purges.wait(big_id), timeout=CLOSE_BOUND_SECONDS)
        namespace_report = await asyncio.wait_for(
            purges.namespaces.wait(namespace_id), timeout=CLOSE_BOUND_SECONDS
        )
        closed = time.monotonic() - started
    finally:
        for worker in workers:
            worker.stop()

    big_status = big_report.status
    assert big_status.state is PurgeState.SUCCEEDED, big_status
    assert big_status.run_count >= 2
    assert_counts_add_up(big_status)
    assert content_counted(big_status) == BIG.content_files
    assert namespace_report.status.state is NamespacePurgeState.SUCCEEDED, namespace_report.status
    assert namespace_report.status.tables_done == SMALL_TABLES
    left = s3.list("s3://warehouse/")
    assert owned & left == set()
    assert (everything - owned) - left == set()
    assert closed < CLOSE_BOUND_SECONDS
    print(
        f"\ncluster: {'; '.join(faults)}; {len(owned)} files purged ({BIG.content_files:,} + {SMALL_TABLES} "
        f"tables), 0 leaked, 0 wrongly deleted, {big_status.run_count} runs, "
        f"closed {closed:.0f} s after the start"
    )
