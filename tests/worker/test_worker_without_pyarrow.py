"""A worker purging tables on S3 (by snapshot, and by name through the SQL and the REST catalog)
never loads PyArrow, ~100 MiB of its resident memory: a table's FileIO is built only when a
request needs it, and on S3 icepurge's own stores send every request."""

from __future__ import annotations

import time
import uuid
from pathlib import Path

from pyiceberg.catalog.rest import RestCatalog
from pyiceberg.catalog.sql import SqlCatalog
from temporalio.client import Client

from icepurge.api.clients.temporal_client import PurgeClient
from icepurge.contract.states import PurgeState
from icepurge.devstack.stack import EmbeddedStack
from tests.conftest import LAKE_CATALOG, REST_CATALOG
from tests.purge_helpers import assert_counts_add_up, request_for
from tests.store import S3Store
from tests.tables import simple_table

QUEUE = "icepurge-without-pyarrow"


def _libraries(pid: int) -> set[str]:
    maps = Path(f"/proc/{pid}/maps").read_text().splitlines()
    return {Path(line.split()[-1]).name for line in maps if line.split()[-1].startswith("/")}


async def test_a_worker_purges_s3_tables_by_snapshot_and_by_name_without_loading_pyarrow(
    lake: SqlCatalog, rest_upstream: RestCatalog, s3: S3Store, stack: EmbeddedStack, temporal_client: Client
) -> None:
    worker = stack.worker_process("without-pyarrow", ICEPURGE_TASK_QUEUE=QUEUE)
    worker.start()
    try:
        deadline = time.monotonic() + 60
        while "icepurge worker polling" not in worker.log_path.read_text(errors="replace"):
            assert time.monotonic() < deadline, "the worker never polled"
            time.sleep(0.2)
        assert worker.pid is not None
        namespace = f"arrowless{uuid.uuid4().hex[:6]}"
        snapshot = simple_table(lake, (namespace,), "snapshot", appends=2)
        named = simple_table(lake, (namespace,), "named", appends=2)
        rest_named = simple_table(rest_upstream, (namespace,), "rest", appends=2)
        tables = [snapshot, named, rest_named]
        assert all(s3.list(table.location()) for table in tables)

        purges = PurgeClient(temporal_client, QUEUE)
        ids = [
            await purges.start(request_for(snapshot, s3.properties)),
            await purges.purge_by_name(LAKE_CATALOG, [namespace], "named", requested_by="pytest"),
            await purges.purge_by_name(REST_CATALOG, [namespace], "rest", requested_by="pytest"),
        ]
        for purge_id, table in zip(ids, tables, strict=True):
            status = (await purges.wait(purge_id)).status
            assert status.state is PurgeState.SUCCEEDED, status.failure_sample
            assert status.planned.files > 0
            assert_counts_add_up(status)
            assert s3.list(table.location()) == set()

        libraries = _libraries(worker.pid)
        # The S3 requests went through obstore's native module: the maps were read whole.
        assert any(name.startswith("_obstore.") for name in libraries), sorted(libraries)
        assert not [name for name in libraries if name.startswith("libarrow")], sorted(libraries)
    finally:
        worker.stop()
