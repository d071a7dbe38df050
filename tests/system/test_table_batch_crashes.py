"""kill -9 during a namespace purge's batch of small tables: while its tables are being dropped and
deleted, and right after it finished but before its result reached Temporal. Either way the
retried batch answers for every table once: each dropped once, its files gone, its record
SUCCEEDED with counts that add up, the namespace purge's totals equal to the files found before."""

from __future__ import annotations

import asyncio
import time
from collections import Counter

from pyiceberg.catalog.sql import SqlCatalog
from temporalio.client import Client

from icepurge.api.clients.temporal_client import PurgeClient
from icepurge.api.clients.temporal_namespace_client import namespace_request
from icepurge.contract.names import PURGE_RANGE_BATCH_ACTIVITY
from icepurge.contract.namespace_status import NamespacePurgeState, NamespacePurgeStatus
from icepurge.contract.states import PurgeState
from icepurge.devstack.stack import EmbeddedStack
from icepurge.worker.settings import WorkerSettings
from tests.batch_records import batch_records
from tests.conftest import LAKE_CATALOG
from tests.dying_worker import died, start_dying_worker
from tests.namespace_trees import Tree, flat_namespace
from tests.purge_helpers import assert_counts_add_up, children_of
from tests.store import S3Store

TABLES = 16


def _drops(stack: EmbeddedStack, log_glob: str, namespace: str, tree: Tree) -> Counter[str]:
    logs = "".join(path.read_text() for path in (stack.state_dir / "logs").glob(log_glob))
    return Counter(
        {
            identifier[-1]: logs.count(
                f"dropped the catalog entry of {LAKE_CATALOG}.{namespace}.{identifier[-1]} "
            )
            for identifier in tree.purged
        }
    )


async def _assert_every_table_once(
    purges: PurgeClient,
    lake: SqlCatalog,
    s3: S3Store,
    settings: WorkerSettings,
    tree: Tree,
    status: NamespacePurgeStatus,
) -> None:
    assert status.state is NamespacePurgeState.SUCCEEDED, status
    assert (status.tables_total, status.tables_done) == (TABLES, TABLES)
    assert status.files.planned == status.files.deleted == tree.files
    for identifier, files in tree.purged.items():
        assert not lake.table_exists(identifier), identifier
        assert not any(s3.exists(uri) for uri in files), identifier
    assert await children_of(purges, status.purge_id) == []
    records = batch_records(s3, settings.state_location, status.purge_id)
    assert sorted(records) == sorted(identifier[-1] for identifier in tree.purged)
    for record in records.values():
        assert record.status.state is PurgeState.SUCCEEDED, record.status
        assert_counts_add_up(record.status)
    assert sum(record.status.files_done for record in records.values()) == tree.files


async def test_a_worker_killed_while_its_batch_drops_and_deletes(
    lake: SqlCatalog,
    temporal_client: Client,
    s3: S3Store,
    stack: EmbeddedStack,
    worker_settings: WorkerSettings,
) -> None:
    queue = "icepurge-batch-kill"
    tree = flat_namespace(lake, s3, ("batch_killed",), TABLES, appends=2)
    purges = PurgeClient(temporal_client, queue)
    first = stack.worker_process("batch-kill-first", ICEPURGE_TASK_QUEUE=queue)
    first.start()
    await asyncio.to_thread(first.wait_for_log, "icepurge worker polling")
    purge_id = await purges.namespaces.start(
        namespace_request(
            LAKE_CATALOG,
            ["batch_killed"],
            requested_by="pytest",
            max_concurrent_tables=TABLES,
            batch_tables=TABLES,
        )
    )
    # The kill lands once the first table has left the catalog: the others are somewhere between
    # their load and their record.
    while len(lake.list_tables(("batch_killed",))) == TABLES:
        await asyncio.sleep(0.005)
    first.kill()
    recorded_at_kill = len(batch_records(s3, worker_settings.state_location, purge_id))
    left_at_kill = len(lake.list_tables(("batch_killed",)))
    second = stack.worker_process("batch-kill-second", ICEPURGE_TASK_QUEUE=queue)
    second.start()
    try:
        started = time.monotonic()
        report = await asyncio.wait_for(purges.namespaces.wait(purge_id), timeout=180)
    finally:
        second.stop()
    print(
        f"\nkilled with {TABLES - left_at_kill} of {TABLES} tables dropped and {recorded_at_kill} recorded;"
        f" closed {time.monotonic() - started:.0f} s after the kill"
    )
    assert recorded_at_kill < TABLES
    await _assert_every_table_once(purges, lake, s3, worker_settings, tree, report.status)
    drops = _drops(stack, "batch-kill-*.log", "batch_killed", tree)
    # A kill between a drop and its log line leaves none; a second drop would log twice.
    assert max(drops.values()) == 1, drops


async def test_a_batch_whose_result_died_with_its_worker_answers_from_its_records(
    lake: SqlCatalog,
    temporal_client: Client,
    s3: S3Store,
    stack: EmbeddedStack,
    worker_settings: WorkerSettings,
) -> None:
    queue = "icepurge-batch-result-lost"
    tree = flat_namespace(lake, s3, ("batch_lost",), TABLES)
    dying = start_dying_worker(stack, queue, PURGE_RANGE_BATCH_ACTIVITY)
    purges = PurgeClient(temporal_client, queue)
    purge_id = await purges.namespaces.start(
        namespace_request(
            LAKE_CATALOG,
            ["batch_lost"],
            requested_by="pytest",
            max_concurrent_tables=TABLES,
            batch_tables=TABLES,
        )
    )
    await asyncio.wait_for(died(dying), timeout=120)
    assert len(batch_records(s3, worker_settings.state_location, purge_id)) == TABLES
    survivor = stack.worker_process("batch-lost-survivor", ICEPURGE_TASK_QUEUE=queue)
    survivor.start()
    try:
        report = await asyncio.wait_for(purges.namespaces.wait(purge_id), timeout=180)
    finally:
        survivor.stop()
    await _assert_every_table_once(purges, lake, s3, worker_settings, tree, report.status)
    drops = _drops(stack, f"dying-{PURGE_RANGE_BATCH_ACTIVITY}.log", "batch_lost", tree)
    assert drops == Counter({identifier[-1]: 1 for identifier in tree.purged}), drops
