"""kill -9 the worker again and again during a namespace purge of 24 tables: the same outcome as
without kills, each table dropped at most once by one purge, one table purge per table. A worker
that dies right after reading a page of the table list holds the purge up for seconds, not
minutes."""

from __future__ import annotations

import asyncio
import random
import time
from collections import Counter

from pyiceberg.catalog.sql import SqlCatalog
from temporalio.client import Client

from icepurge.api.clients.temporal_client import PurgeClient
from icepurge.api.clients.temporal_namespace_client import namespace_request
from icepurge.contract.names import TABLE_PAGE_ACTIVITY
from icepurge.contract.namespace_status import NamespacePurgeState
from icepurge.contract.states import PurgeState
from icepurge.devstack.process import ServiceProcess
from icepurge.devstack.stack import EmbeddedStack
from tests.conftest import LAKE_CATALOG
from tests.dying_worker import died, start_dying_worker
from tests.namespace_trees import flat_namespace
from tests.purge_helpers import children_of
from tests.store import S3Store

QUEUE = "icepurge-namespace-crash"
TABLES = 24
KILLS = 10


def _worker(stack: EmbeddedStack, generation: int) -> ServiceProcess:
    worker = stack.worker_process(
        f"ns-crash-worker-{generation}", ICEPURGE_TASK_QUEUE=QUEUE, ICEPURGE_SHUTDOWN_GRACE_SECONDS="2"
    )
    worker.start()
    return worker


async def test_a_namespace_purge_survives_ten_worker_kills(
    lake: SqlCatalog, temporal_client: Client, s3: S3Store, stack: EmbeddedStack
) -> None:
    tree = flat_namespace(lake, s3, ("killed_ns",), TABLES)
    purges = PurgeClient(temporal_client, QUEUE)
    draw = random.Random(20261122)
    worker = _worker(stack, 0)
    kills = 0
    try:
        purge_id = await purges.namespaces.start(
            namespace_request(
                LAKE_CATALOG, ["killed_ns"], requested_by="pytest", max_concurrent_tables=4, batch_tables=0
            )
        )
        while kills < KILLS:
            await asyncio.to_thread(worker.wait_for_log, "icepurge worker polling")
            await asyncio.sleep(draw.uniform(0.5, 2.5))
            worker.kill()
            kills += 1
            worker = _worker(stack, kills)
        started = time.monotonic()
        report = await asyncio.wait_for(purges.namespaces.wait(purge_id), timeout=420)
        print(f"\nnamespace purge closed {time.monotonic() - started:.0f} s after the last of {kills} kills")
    finally:
        worker.stop()

    status = report.status
    assert status.state is NamespacePurgeState.SUCCEEDED, status
    assert (status.tables_total, status.tables_done) == (TABLES, TABLES)
    assert status.files.planned == status.files.deleted == tree.files
    for identifier, files in tree.purged.items():
        assert not lake.table_exists(identifier)
        assert not any(s3.exists(uri) for uri in files)
    assert not lake.namespace_exists(tree.root)
    children = await children_of(purges, purge_id)
    assert len(children) == len(set(children)) == TABLES
    statuses = [await purges.status(child) for child in children]
    assert all(child.state is PurgeState.SUCCEEDED for child in statuses)
    assert sorted(child.table for child in statuses) == sorted(identifier[-1] for identifier in tree.purged)
    logs = "".join(path.read_text() for path in (stack.state_dir / "logs").glob("ns-crash-worker-*.log"))
    drops = Counter(
        {
            identifier[-1]: logs.count(
                f"dropped the catalog entry of {LAKE_CATALOG}.killed_ns.{identifier[-1]} "
            )
            for identifier in tree.purged
        }
    )
    # A kill between a drop and its log line leaves none; a second drop would log twice.
    assert max(drops.values()) == 1 and sum(drops.values()) >= TABLES - KILLS, drops


async def test_a_worker_dying_after_a_table_page_holds_the_purge_up_for_seconds(
    lake: SqlCatalog, temporal_client: Client, s3: S3Store, stack: EmbeddedStack
) -> None:
    queue = "icepurge-namespace-page-crash"
    tree = flat_namespace(lake, s3, ("paged_ns",), 2)
    dying = start_dying_worker(stack, queue, TABLE_PAGE_ACTIVITY)
    purges = PurgeClient(temporal_client, queue)
    purge_id = await purges.namespaces.start(
        namespace_request(LAKE_CATALOG, ["paged_ns"], requested_by="pytest", batch_tables=0)
    )
    await asyncio.wait_for(died(dying), timeout=120)
    survivor = stack.worker_process("page-survivor", ICEPURGE_TASK_QUEUE=queue)
    survivor.start()
    try:
        # The page read's result died with the worker: it is retried once its timeout passes,
        # which was 5 minutes.
        report = await asyncio.wait_for(purges.namespaces.wait(purge_id), timeout=150)
    finally:
        survivor.stop()

    assert report.status.state is NamespacePurgeState.SUCCEEDED, report.status
    assert report.status.tables_done == 2
    for identifier, files in tree.purged.items():
        assert not lake.table_exists(identifier)
        assert not any(s3.exists(uri) for uri in files)
