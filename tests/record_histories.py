"""Records the workflow histories tests/test_replay.py replays: run it on the code a release
shipped, and its histories show that purges started before an upgrade finish after it.

    .venv/bin/python -m tests.record_histories tests/histories/<name>

Each purge runs on a fresh embedded stack, without a payload codec (the histories are committed:
they hold only this throwaway stack's names and development credentials)."""

from __future__ import annotations

import asyncio
import gzip
import json
import os
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from temporalio.client import Client

from icepurge.api.clients.temporal_client import PurgeClient
from icepurge.api.clients.temporal_namespace_client import namespace_request
from icepurge.connection.connect import connect
from icepurge.devstack.catalog_env import pyiceberg_catalog_env
from icepurge.devstack.ports import StackPorts
from icepurge.devstack.stack import EmbeddedStack
from icepurge.worker.run import build_worker
from icepurge.worker.settings import WorkerSettings
from tests.store import S3Store
from tests.tables import simple_table

CATALOG = "lake"
QUEUE = "icepurge-recorded"


async def _write(client: Client, purge_id: str, folder: Path, name: str) -> None:
    handle = client.get_workflow_handle(purge_id)
    run_id = (await handle.describe()).run_id
    history = await client.get_workflow_handle(purge_id, run_id=run_id).fetch_history()
    recorded = {"workflow_id": purge_id, "history": json.loads(history.to_json())}
    (folder / f"{name}.json.gz").write_bytes(gzip.compress(json.dumps(recorded).encode(), mtime=0))


async def _record(stack: EmbeddedStack, folder: Path) -> None:
    lake = stack.catalog(CATALOG)
    s3 = S3Store(stack.s3_properties)
    settings = WorkerSettings(
        temporal_address=stack.temporal_address,
        state_location=stack.worker_env()["ICEPURGE_STATE_LOCATION"],
        state_io_properties=stack.s3_properties,
        task_queue=QUEUE,
    )
    client = await connect(settings, warn_plaintext=False)
    purges = PurgeClient(client, QUEUE)
    with ThreadPoolExecutor(settings.max_concurrent_activities) as pool:
        async with build_worker(client, settings, pool):
            simple_table(lake, ("old",), "t0", appends=1)
            simple_table(lake, ("old", "inner"), "t1", appends=1)
            namespace_id = await purges.namespaces.start(
                namespace_request(
                    CATALOG, ["old"], requested_by="recorder", recursive=True, max_concurrent_tables=1
                )
            )
            await purges.namespaces.wait(namespace_id)
            await _write(client, namespace_id, folder, "namespace_purge")

            simple_table(lake, ("rehearsed",), "t0", appends=1)
            rehearsal_id = await purges.namespaces.start(
                namespace_request(CATALOG, ["rehearsed"], requested_by="recorder", options={"dry_run": True})
            )
            await purges.namespaces.wait(rehearsal_id)
            await _write(client, rehearsal_id, folder, "namespace_purge_dry_run")

            sweep = {"sweep_location": True, "sweep_grace_seconds": 0}
            for name, options in (("sweep", sweep), ("dry_run_sweep", {**sweep, "dry_run": True})):
                table = simple_table(lake, ("swept",), name, appends=1)
                s3.put(f"{table.location()}/data/aborted.parquet", b"never referenced")
                time.sleep(1.2)
                purge_id = await purges.purge_by_name(
                    CATALOG, ["swept"], name, requested_by="recorder", options=options
                )
                await purges.wait(purge_id)
                await _write(client, purge_id, folder, f"table_purge_{name}")


def main() -> None:
    folder = Path(sys.argv[1])
    folder.mkdir(parents=True, exist_ok=True)
    stack = EmbeddedStack(
        state_dir=Path(tempfile.mkdtemp(prefix="icepurge-record-")), ports=StackPorts.free()
    )
    stack.start()
    try:
        os.environ.update(pyiceberg_catalog_env(CATALOG, stack.catalog_properties(CATALOG)))
        asyncio.run(_record(stack, folder))
    finally:
        stack.stop()


if __name__ == "__main__":
    main()
