"""icepurge against what a user could pick instead, in one run on the same stack and table shape:
(a) PyIceberg `purge_table`, (b) icepurge local engine, (c) icepurge Spark engine (local[2,4]),
(d) the raw ceiling: the same number of keys bulk-deleted directly, no metadata work.

    .venv/bin/python -m bench.compare_engines --sizes 20000 [--files-per-manifest 500]
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

from pyiceberg.catalog.sql import SqlCatalog

from api.client import PurgeClient
from bench.purge_throughput import bulk_delete_ceiling
from devstack.ports import StackPorts
from devstack.process import ServiceProcess
from devstack.requests import request_for_table
from devstack.stack import WAREHOUSE_BUCKET, EmbeddedStack
from devstack.synthetic_table import synthetic_table
from worker.connect import connect
from worker.settings import TemporalSettings
from workflows.counts import Category

LOCAL_QUEUE, SPARK_QUEUE = "bench-local", "bench-spark"


@dataclass
class Measured:
    files: int
    seconds: float
    history_events: int | None = None
    peak_rss_mib: float | None = None

    @property
    def rate(self) -> float:
        return self.files / self.seconds


def _peak_rss_mib(pid: int | None) -> float | None:
    if pid is None:
        return None
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return None


def _catalog(stack: EmbeddedStack) -> SqlCatalog:
    return SqlCatalog(
        "bench", uri=stack.catalog_uri, warehouse=f"s3://{WAREHOUSE_BUCKET}/bench", **stack.s3_properties
    )


def pyiceberg_purge(stack: EmbeddedStack, manifests: int, files: int) -> Measured:
    catalog = _catalog(stack)
    identifier = ("bench", f"pyiceberg_{uuid.uuid4().hex[:8]}")
    synthetic_table(catalog, identifier, manifests=manifests, files_per_manifest=files)
    started = time.perf_counter()
    catalog.purge_table(identifier)
    return Measured(files=manifests * files, seconds=time.perf_counter() - started)


async def icepurge_purge(
    stack: EmbeddedStack, worker: ServiceProcess, *, queue: str, engine: str, manifests: int, files: int
) -> Measured:
    catalog = _catalog(stack)
    table = synthetic_table(
        catalog, ("bench", f"{engine}_{uuid.uuid4().hex[:8]}"), manifests=manifests, files_per_manifest=files
    )
    temporal = await connect(TemporalSettings(temporal_address=stack.temporal_address))
    client = PurgeClient(temporal, queue)
    request = request_for_table("bench", table, stack.s3_properties, "bench", engine=engine)
    started = time.perf_counter()
    purge_id = await client.start(request)
    report = await client.wait(purge_id)
    seconds = time.perf_counter() - started
    events = 0
    async for execution in temporal.list_workflows(f"WorkflowId='{purge_id}'"):
        events += execution.history_length
    return Measured(
        files=report.status.counts.of(Category.DATA_FILES).deleted,
        seconds=seconds,
        history_events=events,
        peak_rss_mib=_peak_rss_mib(worker.pid),
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", type=int, nargs="+", default=[20_000])
    parser.add_argument("--files-per-manifest", type=int, default=500)
    parser.add_argument("--skip-pyiceberg", action="store_true", help="(a) is slow on big tables")
    args = parser.parse_args()
    stack = EmbeddedStack(state_dir=Path(tempfile.mkdtemp(prefix="icepurge-bench-")), ports=StackPorts.free())
    stack.start()
    local = stack.worker_process("bench-local", ICEPURGE_TASK_QUEUE=LOCAL_QUEUE)
    spark = stack.worker_process(
        "bench-spark",
        ICEPURGE_TASK_QUEUE=SPARK_QUEUE,
        ICEPURGE_SPARK_MASTER="local[2,4]",
        ICEPURGE_SPARK_CONF='{"spark.ui.enabled": "false"}',
    )
    try:
        local.start()
        spark.start()
        for size in args.sizes:
            manifests = max(1, size // args.files_per_manifest)
            files = size // manifests
            print(f"\n== {manifests * files} data files ({manifests} manifests x {files}) ==")
            ceiling = bulk_delete_ceiling(stack, manifests * files)
            rows = {}
            if not args.skip_pyiceberg:
                rows["(a) PyIceberg purge_table"] = pyiceberg_purge(stack, manifests, files)
            rows["(b) icepurge local"] = asyncio.run(
                icepurge_purge(
                    stack, local, queue=LOCAL_QUEUE, engine="local", manifests=manifests, files=files
                )
            )
            rows["(c) icepurge spark"] = asyncio.run(
                icepurge_purge(
                    stack, spark, queue=SPARK_QUEUE, engine="spark", manifests=manifests, files=files
                )
            )
            baseline = rows.get("(a) PyIceberg purge_table")
            print(f"(d) raw bulk-delete ceiling: {ceiling:,.0f} keys/s")
            for name, measured in rows.items():
                versus = f", {measured.rate / baseline.rate:.1f}x (a)" if baseline else ""
                extra = ""
                if measured.history_events is not None:
                    extra = (
                        f", {measured.history_events} history events,"
                        f" worker peak RSS {measured.peak_rss_mib or 0:.0f} MiB"
                    )
                print(
                    f"{name}: {measured.rate:,.0f} data files/s ({measured.seconds:.1f} s), "
                    f"{measured.rate / ceiling:.2f}x (d){versus}{extra}"
                )
    finally:
        spark.stop()
        local.stop()
        stack.stop()


if __name__ == "__main__":
    main()
