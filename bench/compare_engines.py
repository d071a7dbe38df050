"""icepurge against what a user could pick instead, in one run on the same stack and the very
same tables: (a) PyIceberg `purge_table`, (b) icepurge local engine, (c) icepurge Spark engine
(local[2,4]), (d) the raw ceiling: as many keys bulk-deleted directly, no metadata work.

Each table (10 snapshots, data manifests of 500 files, 10 position-delete files per snapshot)
is generated once and restored before each contender. `--sizes` go to SeaweedFS, `--disk-sizes`
to the local disk. Workers are started per table size, so their peak RSS is per size.

    .venv/bin/python -m bench.compare_engines --sizes 20000 100000 --disk-sizes 500000
"""

from __future__ import annotations

import argparse
import asyncio
import os
import tempfile
import time
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from pyiceberg.catalog.sql import SqlCatalog
from pyiceberg.table import Table

from activities.s3_client import s3_client
from api.client import PurgeClient
from bench.purge_throughput import bulk_delete_ceiling
from bench.table_templates import DiskTemplate, S3Template, TableTemplate
from devstack.ports import StackPorts
from devstack.process import WORKER_READY, ServiceProcess
from devstack.requests import request_for_table
from devstack.stack import EmbeddedStack
from devstack.synthetic_table import OBJECT_BODY, TableShape, synthetic_table
from worker.connect import connect

LOCAL_QUEUE, SPARK_QUEUE = "bench-local", "bench-spark"
FILES_PER_MANIFEST, SNAPSHOTS, DELETE_FILES_PER_SNAPSHOT = 500, 10, 10
CEILING_THREADS = 8


@dataclass
class Measured:
    objects: int
    seconds: float
    left: int = 0
    history_events: int | None = None
    peak_rss_mib: tuple[float, float] | None = None

    @property
    def rate(self) -> float:
        return self.objects / self.seconds


def _peak_rss_mib(pid: int) -> tuple[float, float]:
    """Peak RSS of a process, and summed over it and its descendants (the Spark JVM and Python
    workers included)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(parent, []).append(int(entry.name))
    own, total, pending = 0.0, 0.0, [pid]
    while pending:
        current = pending.pop()
        pending.extend(children.get(current, []))
        try:
            status = Path(f"/proc/{current}/status").read_text()
        except OSError:
            continue
        for line in status.splitlines():
            if line.startswith("VmHWM:"):
                peak = int(line.split()[1]) / 1024
                total += peak
                own = peak if current == pid else own
    return own, total


def disk_delete_ceiling(directory: Path, count: int) -> float:
    """Files/s of plain unlink on 8 threads, with no metadata work at all."""
    directory.mkdir(parents=True)
    paths = [directory / f"{index:07d}.parquet" for index in range(count)]
    with ThreadPoolExecutor(32) as pool:
        list(pool.map(lambda path: path.write_bytes(OBJECT_BODY), paths))
    started = time.perf_counter()
    with ThreadPoolExecutor(CEILING_THREADS) as pool:
        list(pool.map(os.unlink, paths))
    return count / (time.perf_counter() - started)


def _workers(stack: EmbeddedStack, size: int) -> dict[str, ServiceProcess]:
    workers = {
        "local": stack.worker_process(f"bench-local-{size}", ICEPURGE_TASK_QUEUE=LOCAL_QUEUE),
        "spark": stack.worker_process(
            f"bench-spark-{size}",
            ICEPURGE_TASK_QUEUE=SPARK_QUEUE,
            ICEPURGE_SPARK_MASTER="local[2,4]",
            ICEPURGE_SPARK_CONF='{"spark.ui.enabled": "false"}',
        ),
    }
    for worker in workers.values():
        worker.start()
    for worker in workers.values():
        worker.wait_for_log(WORKER_READY)
    return workers


async def icepurge_purge(
    stack: EmbeddedStack, worker: ServiceProcess, table: Table, template: TableTemplate, engine: str
) -> Measured:
    temporal = await connect(stack.temporal_settings())
    client = PurgeClient(temporal, SPARK_QUEUE if engine == "spark" else LOCAL_QUEUE)
    properties = stack.s3_properties if table.location().startswith("s3") else {}
    # A catalog name per engine, so each contender's purge of the same table has its own id.
    request = request_for_table(f"bench-{engine}", table, properties, "bench", engine=engine)
    started = time.perf_counter()
    purge_id = await client.start(request)
    await client.wait(purge_id)
    seconds = time.perf_counter() - started
    events = 0
    async for execution in temporal.list_workflows(f"WorkflowId='{purge_id}'"):
        events += execution.history_length
    assert worker.pid is not None
    return Measured(
        objects=template.objects,
        seconds=seconds,
        left=template.remaining(),
        history_events=events,
        peak_rss_mib=_peak_rss_mib(worker.pid),
    )


def pyiceberg_purge(catalog: SqlCatalog, identifier: tuple[str, str], template: TableTemplate) -> Measured:
    started = time.perf_counter()
    catalog.purge_table(identifier)
    return Measured(
        objects=template.objects, seconds=time.perf_counter() - started, left=template.remaining()
    )


def _print(ceiling: float, rows: dict[str, Measured]) -> None:
    baseline = rows.get("(a) PyIceberg purge_table")
    print(f"(d) raw delete ceiling: {ceiling:,.0f} objects/s")
    for name, measured in rows.items():
        versus = f", {measured.rate / baseline.rate:.1f}x (a)" if baseline else ""
        extra = f", {measured.left} objects left"
        if measured.history_events is not None and measured.peak_rss_mib is not None:
            own, tree = measured.peak_rss_mib
            extra += (
                f", {measured.history_events} history events,"
                f" worker peak RSS {own:.0f} MiB ({tree:.0f} MiB with its Spark processes)"
            )
        print(
            f"{name}: {measured.rate:,.0f} objects/s ({measured.seconds:.1f} s), "
            f"{measured.rate / ceiling:.2f}x (d){versus}{extra}",
            flush=True,
        )


def compare(
    *,
    stack: EmbeddedStack,
    catalog: SqlCatalog,
    size: int,
    make_template: Callable[[Table], TableTemplate],
    ceiling: Callable[[int], float],
    with_pyiceberg: bool,
) -> None:
    shape = TableShape(
        manifests=max(1, size // FILES_PER_MANIFEST),
        files_per_manifest=min(size, FILES_PER_MANIFEST),
        snapshots=SNAPSHOTS,
        delete_files_per_snapshot=DELETE_FILES_PER_SNAPSHOT,
    )
    identifier = ("bench", f"t{size}_{uuid.uuid4().hex[:6]}")
    started = time.perf_counter()
    table = synthetic_table(catalog, identifier, shape)
    template = make_template(table)
    print(
        f"\n== {table.location()}: {shape.content_files:,} content files, {template.objects:,} objects"
        f" (generated and kept in {time.perf_counter() - started:.0f} s) ==",
        flush=True,
    )
    workers = _workers(stack, size)
    rows: dict[str, Measured] = {}
    try:
        for engine, name in (("local", "(b) icepurge local"), ("spark", "(c) icepurge spark")):
            rows[name] = asyncio.run(icepurge_purge(stack, workers[engine], table, template, engine))
            template.restore()
    finally:
        for worker in workers.values():
            worker.stop()
    if with_pyiceberg:
        rows = {"(a) PyIceberg purge_table": pyiceberg_purge(catalog, identifier, template), **rows}
    _print(ceiling(template.objects), rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", type=int, nargs="*", default=[20_000])
    parser.add_argument("--disk-sizes", type=int, nargs="*", default=[])
    parser.add_argument("--skip-pyiceberg", action="store_true", help="(a) is slow on big tables")
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="icepurge-bench-"))
    stack = EmbeddedStack(state_dir=root / "stack", ports=StackPorts.free())
    stack.start()
    try:
        s3_catalog = stack.catalog("bench")
        client = s3_client(stack.s3_properties, max_connections=40)
        for size in args.sizes:
            compare(
                stack=stack,
                catalog=s3_catalog,
                size=size,
                make_template=lambda table: S3Template(client, table.location()),
                ceiling=lambda count: bulk_delete_ceiling(stack, count),
                with_pyiceberg=not args.skip_pyiceberg,
            )
        disk_catalog = SqlCatalog(
            "disk", uri=f"sqlite:///{root / 'disk-catalog.sqlite'}", warehouse=(root / "disk").as_uri()
        )
        for size in args.disk_sizes:
            compare(
                stack=stack,
                catalog=disk_catalog,
                size=size,
                make_template=lambda table: DiskTemplate(
                    table.location(), root / f"template-{uuid.uuid4().hex[:6]}"
                ),
                ceiling=lambda count: disk_delete_ceiling(root / f"ceiling-{uuid.uuid4().hex[:6]}", count),
                with_pyiceberg=not args.skip_pyiceberg,
            )
    finally:
        stack.stop()


if __name__ == "__main__":
    main()
