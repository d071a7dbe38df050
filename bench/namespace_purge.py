"""A namespace purge of N small real tables (PyIceberg, three appends each) on the embedded stack:
tables/min, files/s against the store's raw bulk-delete ceiling for the same number of keys,
history events per run of the namespace purge and of one table purge, the worker's peak RSS.
The worker runs as its own process, as in production.

    .venv/bin/python -m bench.namespace_purge --tables 1000 --window 16 [--no-guard]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import time
from pathlib import Path

from temporalio.client import Client

from bench.bench_stack import bench_stack
from bench.purge_throughput import bulk_delete_ceiling
from icepurge.api.clients.listing import PurgeFilter
from icepurge.api.clients.temporal_client import PurgeClient
from icepurge.api.clients.temporal_namespace_client import namespace_request
from icepurge.connection.connect import connect
from icepurge.devstack.catalog_env import pyiceberg_catalog_env
from icepurge.devstack.process import ServiceProcess
from icepurge.devstack.small_tables import create_demo_table
from icepurge.devstack.stack import EmbeddedStack

QUEUE = "bench-namespace"
CATALOG = "benchlake"
NAMESPACE = ("bench", "retired")


def _peak_rss_mib(worker: ServiceProcess) -> float:
    status = Path(f"/proc/{worker.pid}/status").read_text()
    line = next(line for line in status.splitlines() if line.startswith("VmHWM:"))
    return int(line.split()[1]) / 1024


async def _events_per_run(client: Client, workflow_id: str) -> list[int]:
    return [
        execution.history_length async for execution in client.list_workflows(f"WorkflowId = '{workflow_id}'")
    ]


async def _purge(stack: EmbeddedStack, window: int, guard: bool) -> None:
    client = await connect(stack.temporal_settings())
    purges = PurgeClient(client, QUEUE)
    started = time.perf_counter()
    purge_id = await purges.namespaces.start(
        namespace_request(
            CATALOG,
            list(NAMESPACE),
            requested_by="bench",
            max_concurrent_tables=window,
            options={"live_table_guard": guard},
        )
    )
    report = await purges.namespaces.wait(purge_id)
    seconds = time.perf_counter() - started
    status = report.status
    files_per_second = status.files.deleted / seconds
    print(
        f"  namespace purge: {status.state.value}, {status.tables_done}/{status.tables_total} tables, "
        f"{status.files.deleted:,} files in {seconds:.1f} s"
    )
    print(f"  tables/min: {status.tables_done / seconds * 60:,.0f}; files/s: {files_per_second:,.0f}")
    await asyncio.sleep(2)
    runs = await _events_per_run(client, purge_id)
    print(f"  namespace purge history: {len(runs)} runs, events per run max {max(runs)}, total {sum(runs)}")
    child = (await purges.list(PurgeFilter(parent=purge_id), page_size=1)).items[0].purge_id
    print(f"  one table purge's history: {sum(await _events_per_run(client, child))} events")
    ceiling = bulk_delete_ceiling(stack, status.files.deleted)
    print(
        f"  raw bulk-delete ceiling for {status.files.deleted:,} keys: {ceiling:,.0f} keys/s; "
        f"namespace purge at {files_per_second / ceiling:.3f}x"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--tables", type=int, default=1000)
    parser.add_argument("--window", type=int, default=16, help="max_concurrent_tables")
    parser.add_argument(
        "--no-guard", action="store_true", help="live_table_guard off: what the guard costs per table"
    )
    arguments = parser.parse_args()
    with bench_stack("icepurge-bench-namespace-") as (_, stack):
        worker: ServiceProcess | None = None
        try:
            os.environ.update(pyiceberg_catalog_env(CATALOG, stack.catalog_properties(CATALOG)))
            catalog = stack.catalog(CATALOG)
            started = time.perf_counter()
            for index in range(arguments.tables):
                create_demo_table(catalog, NAMESPACE, f"t{index:05d}")
            print(
                f"namespace {'.'.join(NAMESPACE)}: {arguments.tables} tables of three appends "
                f"(created in {time.perf_counter() - started:.0f} s), window {arguments.window}, 2 cores, "
                f"live-table guard {'off' if arguments.no_guard else 'on'}"
            )
            worker = stack.worker_process("bench-namespace-worker", ICEPURGE_TASK_QUEUE=QUEUE)
            worker.start()
            worker.wait_for_log("icepurge worker polling")
            asyncio.run(_purge(stack, arguments.window, guard=not arguments.no_guard))
            print(f"  worker peak RSS: {_peak_rss_mib(worker):,.0f} MiB")
        finally:
            if worker is not None:
                worker.stop()


if __name__ == "__main__":
    main()
