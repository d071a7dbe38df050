"""Records the workflow histories tests/workflows/test_replay.py replays: run it on the code a release
shipped, and its histories show that purges started before an upgrade finish after it.

    .venv/bin/python -m tests.record_histories tests/histories/<name>

Each purge runs on a fresh embedded stack, without a payload codec (the histories are committed:
they hold only this throwaway stack's names and development credentials)."""

from __future__ import annotations

import asyncio
import contextlib
import gzip
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import urlsplit

from pyiceberg.catalog.sql import SqlCatalog
from temporalio.client import Client

from icepurge.api.clients.errors import PurgeFailedError
from icepurge.api.clients.listing import PurgeFilter
from icepurge.api.clients.temporal_client import PurgeClient
from icepurge.api.clients.temporal_namespace_client import namespace_request
from icepurge.connection.connect import connect
from icepurge.connection.exit_now import run_then_exit
from icepurge.contract.names import TABLE_RANGE_WORKFLOW_TYPE
from icepurge.contract.namespace_request import NamespacePurgeRequest
from icepurge.contract.states import PurgeState
from icepurge.devstack.catalog_env import pyiceberg_catalog_env
from icepurge.devstack.ports import StackPorts
from icepurge.devstack.requests import request_for_table
from icepurge.devstack.stack import EmbeddedStack
from icepurge.worker.run import activity_pool, build_worker
from icepurge.worker.settings import WorkerSettings
from icepurge.workflows.shared.echo import ECHO_WORKFLOW_TYPE
from tests.store import S3Store
from tests.tables import many_files_table, simple_table

CATALOG = "lake"
QUEUE = "icepurge-recorded"
# Small chunks and an early suggestion to continue as new: a few hundred files cross runs.
CHUNK_FILES = 40
CONTINUE_AS_NEW_EVENTS = 60


async def _write(client: Client, purge_id: str, folder: Path, name: str) -> None:
    """Every run of the purge's chain (continue-as-new), the first as `name`, then `name-runN`."""
    runs = [run async for run in client.list_workflows(f"WorkflowId = '{purge_id}'")]
    for index, run in enumerate(sorted(runs, key=lambda found: found.start_time)):
        history = await client.get_workflow_handle(purge_id, run_id=run.run_id).fetch_history()
        recorded = {"workflow_id": purge_id, "history": json.loads(history.to_json())}
        suffix = f"-run{index + 1}" if index else ""
        (folder / f"{name}{suffix}.json.gz").write_bytes(
            gzip.compress(json.dumps(recorded).encode(), mtime=0)
        )


async def _until(purges: PurgeClient, purge_id: str, state: PurgeState) -> None:
    while (await purges.status(purge_id)).state is not state:
        await asyncio.sleep(0.2)


async def _closed(purges: PurgeClient, purge_id: str) -> None:
    with contextlib.suppress(PurgeFailedError):
        await purges.wait(purge_id)


async def _record_table_paths(client: Client, purges: PurgeClient, lake: SqlCatalog, folder: Path) -> None:
    """By snapshot across continue-as-new, soft delete (undrop, expedite, cancel), the controls,
    a failure, a file already gone, by name in the express lane, held (and held then undropped),
    and doctor's echo."""
    table = many_files_table(lake, ("chained",), "t", manifests=10, files=40)
    snapshot = request_for_table("tests", table, table.io.properties, "recorder")
    purge_id = await purges.start(snapshot)
    await purges.wait(purge_id)
    await _write(client, purge_id, folder, "table_purge_continue_as_new")

    soft = {"purge_after_seconds": 3600}
    for name, act in (("undrop", purges.undrop), ("expedite", purges.expedite), ("cancel", purges.cancel)):
        simple_table(lake, ("soft",), name, appends=1)
        purge_id = await purges.purge_by_name(CATALOG, ["soft"], name, requested_by="recorder", options=soft)
        await _until(purges, purge_id, PurgeState.SCHEDULED)
        await act(purge_id)
        await _closed(purges, purge_id)
        await _write(client, purge_id, folder, f"table_purge_soft_delete_{name}")

    table = many_files_table(lake, ("controlled",), "t", manifests=2, files=20)
    slow = request_for_table("tests", table, table.io.properties, "recorder", bucket_requests_per_second=2)
    purge_id = await purges.start(slow)
    await _until(purges, purge_id, PurgeState.DELETING)
    await purges.pause(purge_id)
    await purges.set_rate_budget(purge_id, None)
    await purges.resume(purge_id)
    await purges.wait(purge_id)
    await _write(client, purge_id, folder, "table_purge_controls")

    # Chunks started once the plan is known, under a budget, fewer than the window
    # (CHUNK_SHARES_OVER_CHUNKS_LEFT): each takes a share over the chunks left.
    table = many_files_table(lake, ("budgeted",), "t", manifests=1, files=3)
    budgeted = request_for_table(
        "tests",
        table,
        table.io.properties,
        "recorder",
        bucket_requests_per_second=30,
        chunk_window=16,
        delete_while_planning=False,
    )
    purge_id = await purges.start(budgeted)
    await purges.wait(purge_id)
    await _write(client, purge_id, folder, "table_purge_budget_chunks")

    missing = snapshot.model_copy(
        update={
            "metadata_location": snapshot.snapshot_location().replace(".metadata.json", "-gone.metadata.json")
        }
    )
    purge_id = await purges.start(missing)
    await _closed(purges, purge_id)
    await _write(client, purge_id, folder, "table_purge_failed")

    # A data file deleted before the purge (on the local disk, which tells a missing file from a
    # deleted one): its outcome note goes into the memo.
    warehouse = Path(tempfile.mkdtemp(prefix="icepurge-record-disk-"))
    disk = SqlCatalog("disk", uri=lake.properties["uri"], warehouse=warehouse.as_uri())
    table = simple_table(disk, ("gone",), "t", appends=2)
    first = sorted(task.file.file_path for task in table.scan().plan_files())[0]
    Path(urlsplit(first).path).unlink()
    purge_id = await purges.start(request_for_table("tests", table, table.io.properties, "recorder"))
    await purges.wait(purge_id)
    await _write(client, purge_id, folder, "table_purge_already_gone")

    simple_table(lake, ("express",), "t", appends=2)
    purge_id = await purges.purge_by_name(CATALOG, ["express"], "t", requested_by="recorder")
    await purges.wait(purge_id)
    await _write(client, purge_id, folder, "table_purge_express")

    held = {"hold_namespace": "held"}
    simple_table(lake, ("holding",), "t", appends=2)
    purge_id = await purges.purge_by_name(CATALOG, ["holding"], "t", requested_by="recorder", options=held)
    await purges.wait(purge_id)
    await _write(client, purge_id, folder, "table_purge_held")
    simple_table(lake, ("holding",), "u", appends=1)
    purge_id = await purges.purge_by_name(
        CATALOG, ["holding"], "u", requested_by="recorder", options={**held, **soft}
    )
    await _until(purges, purge_id, PurgeState.SCHEDULED)
    await purges.undrop(purge_id)
    await _closed(purges, purge_id)
    await _write(client, purge_id, folder, "table_purge_held_undrop")

    echo_id = "icepurge-doctor-recorded"
    await client.execute_workflow(ECHO_WORKFLOW_TYPE, "probe", id=echo_id, task_queue=QUEUE, result_type=str)
    await _write(client, echo_id, folder, "echo")


async def _three_tables_purged(
    client: Client, lake: SqlCatalog, request: NamespacePurgeRequest, folder: Path
) -> str:
    """Three tables made in the request's namespace and purged by it; its history written as
    namespace_purge_<namespace>."""
    name = request.namespace[-1]
    for index in range(3):
        simple_table(lake, tuple(request.namespace), f"t{index}", appends=1)
    purges = PurgeClient(client, QUEUE)
    purge_id = await purges.namespaces.start(request)
    await purges.namespaces.wait(purge_id)
    await _write(client, purge_id, folder, f"namespace_purge_{name}")
    return purge_id


async def _first_range(client: Client, parent: str) -> str:
    """A range workflow of the namespace purge, once visibility lists it."""
    query = f"WorkflowType = '{TABLE_RANGE_WORKFLOW_TYPE}' AND WorkflowId STARTS_WITH '{parent}/'"
    for _ in range(100):
        async for found in client.list_workflows(query):
            return found.id
        await asyncio.sleep(0.1)
    raise RuntimeError(f"namespace purge {parent} lists no range")


async def _first_child(purges: PurgeClient, parent: str) -> str:
    """A table purge the namespace purge started, once visibility lists it."""
    for _ in range(100):
        page = await purges.list(PurgeFilter(parent=parent), page_size=1)
        if page.items:
            return page.items[0].purge_id
        await asyncio.sleep(0.1)
    raise RuntimeError(f"namespace purge {parent} lists no table purge")


async def _record(stack: EmbeddedStack, folder: Path) -> None:
    lake = stack.catalog(CATALOG)
    s3 = S3Store(stack.s3_properties)
    settings = WorkerSettings(
        temporal_address=stack.temporal_address,
        state_location=stack.worker_env()["ICEPURGE_STATE_LOCATION"],
        state_io_properties=stack.s3_properties,
        task_queue=QUEUE,
        chunk_target_files=CHUNK_FILES,
        snapshot_only_catalogs=["tests"],
    )
    client = await connect(settings, warn_plaintext=False)
    purges = PurgeClient(client, QUEUE)
    with activity_pool(settings) as pool:
        async with build_worker(client, settings, pool):
            simple_table(lake, ("old",), "t0", appends=1)
            simple_table(lake, ("old", "inner"), "t1", appends=1)
            # A workflow per table (batches are the default since slim batches): its children's
            # histories are recorded too.
            namespace_id = await purges.namespaces.start(
                namespace_request(
                    CATALOG,
                    ["old"],
                    requested_by="recorder",
                    recursive=True,
                    max_concurrent_tables=1,
                    batch_tables=0,
                )
            )
            await purges.namespaces.wait(namespace_id)
            await _write(client, namespace_id, folder, "namespace_purge")
            await _write(client, await _first_child(purges, namespace_id), folder, "table_purge_of_namespace")

            batched = namespace_request(CATALOG, ["batched"], requested_by="recorder", batch_tables=2)
            await _three_tables_purged(client, lake, batched, folder)
            ranged = namespace_request(CATALOG, ["ranged"], requested_by="recorder", range_tables=2)
            ranged_id = await _three_tables_purged(client, lake, ranged, folder)
            await _write(client, await _first_range(client, ranged_id), folder, "table_range")
            # Two ranges in a window with room for four (WHOLE_WINDOW_RANGES).
            ranged_wide = namespace_request(
                CATALOG, ["ranged_wide"], requested_by="recorder", range_tables=2, max_concurrent_tables=64
            )
            await _three_tables_purged(client, lake, ranged_wide, folder)

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
            await _record_table_paths(client, purges, lake, folder)


def main() -> None:
    folder = Path(sys.argv[1])
    folder.mkdir(parents=True, exist_ok=True)
    stack = EmbeddedStack(
        state_dir=Path(tempfile.mkdtemp(prefix="icepurge-record-")),
        ports=StackPorts.free(),
        dynamic_config={"limit.historyCount.suggestContinueAsNew": str(CONTINUE_AS_NEW_EVENTS)},
    )
    stack.start()
    try:
        os.environ.update(pyiceberg_catalog_env(CATALOG, stack.catalog_properties(CATALOG)))
        asyncio.run(_record(stack, folder))
    finally:
        stack.stop()


if __name__ == "__main__":
    run_then_exit(main)
