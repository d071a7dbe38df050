"""kill -9 the worker mid-purge, several times: a new worker finishes the run, nothing leaks,
the counters stay exact and finished work is not redone."""

from __future__ import annotations

import asyncio
from collections import Counter

from pyiceberg.catalog.sql import SqlCatalog
from temporalio.client import Client

from icepurge.api.clients.temporal_client import PurgeClient
from icepurge.contract.counts import Category
from icepurge.contract.states import PurgeState
from icepurge.devstack.process import ServiceProcess
from icepurge.devstack.s3_proxy import s3_proxy, through_proxy
from icepurge.devstack.stack import EmbeddedStack
from tests.purge_helpers import assert_counts_add_up, request_for
from tests.store import S3Store
from tests.tables import many_files_table

QUEUE = "icepurge-crash"
MANIFESTS, FILES = 16, 20


def _worker(stack: EmbeddedStack, generation: int) -> ServiceProcess:
    worker = stack.worker_process(
        f"crash-worker-{generation}",
        ICEPURGE_TASK_QUEUE=QUEUE,
        ICEPURGE_CHUNK_TARGET_FILES="40",
    )
    worker.start()
    return worker


async def test_killed_workers_resume_from_the_last_checkpoint(
    catalog: SqlCatalog, temporal_client: Client, s3: S3Store, stack: EmbeddedStack
) -> None:
    table = many_files_table(catalog, ("crash",), "resume", manifests=MANIFESTS, files=FILES)
    before = s3.list(table.location())
    purges = PurgeClient(temporal_client, QUEUE)
    # One delete request per 40-file chunk (8 of them), then finalize's.
    kill_points = (2, 5, 7)
    with s3_proxy(stack.ports.s3) as (port, faults):
        faults.delete_delay = 0.4
        properties = through_proxy(s3.properties, port)
        worker = _worker(stack, 0)
        try:
            purge_id = await purges.start(request_for(table, properties, chunk_window=1))
            for generation, point in enumerate(kill_points, start=1):
                await asyncio.wait_for(faults.deletes_reached(point), timeout=180)
                worker.kill()
                worker = _worker(stack, generation)
            report = await asyncio.wait_for(purges.wait(purge_id), timeout=300)
        finally:
            worker.stop()

    assert report.status.state is PurgeState.SUCCEEDED
    assert s3.list(table.location()) == set()
    counts = report.status.counts
    assert counts.of(Category.DATA_FILES).deleted == MANIFESTS * FILES
    # A manifest whose delete reached the store just as its worker died is found gone on retry.
    manifests = counts.of(Category.MANIFESTS)
    assert manifests.deleted + manifests.already_missing == MANIFESTS
    assert manifests.already_missing <= len(kill_points) * 2
    # Each kill redoes at most the group in flight: a chunk here is 40 files, one group.
    resent = sum(times - 1 for times in Counter(faults.deleted_keys).values())
    assert resent <= len(kill_points) * 2 * FILES
    assert_counts_add_up(report.status)
    secret = s3.properties["s3.secret-access-key"]
    for log in (stack.state_dir / "logs").glob("crash-worker-*.log"):
        assert secret not in log.read_text()
    assert set(key for key in faults.deleted_keys) >= {
        path.split("/", 3)[3] for path in before if "/data/" in path
    }
