"""icepurge against what a user could pick instead, in one run, on the very same tables: per
store, shape and size, (a) PyIceberg `purge_table`, (b) the icepurge local engine, (c) the icepurge
Spark engine (local[2,4]), against (d) the raw ceiling: as many distinct keys deleted with the
store's own bulk delete and no metadata work (S3 DeleteObjects of 1000, Azure Blob Batch of 256,
unlink on disk; 8 threads).

Shapes: append-only (10 snapshots, data manifests of 500 files, 10 position-delete files per
snapshot) and rewrite-heavy (merge-appends listing earlier files again, copy-on-write rewrites,
the oldest snapshots expired: devstack/synthetic_rewrites.py). Each table is generated once and
restored before each contender. Rates count distinct objects (every object the table owned:
content files, manifests, manifest lists, metadata and statistics files). "keys/distinct" is
what the purge's own accounting says it sent (deleted + already missing + failed) over the
distinct objects. Planning, chunk and finalize seconds come from the purge's workflow history.
Workers start per table, so their peak RSS is per table; each worker purges a small table first
(its duration is printed, not measured), so what is measured is a warm worker's purge, as in
service.

    .venv/bin/python -m bench.compare_engines --sizes 6000 20000 100000 --stores s3 azure
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

from pyiceberg.table import Table

from api.client import PurgeClient
from bench.bench_stores import AzureBenchStore, BenchStore, DiskBenchStore, S3BenchStore
from bench.purge_timeline import purge_timeline
from bench.table_templates import TableTemplate
from devstack.azurite import AzuriteEndpoint, azurite_server, azurite_unavailable, create_containers
from devstack.ports import StackPorts
from devstack.process import WORKER_READY, ServiceProcess, free_ports
from devstack.requests import request_for_table
from devstack.stack import EmbeddedStack
from devstack.synthetic_rewrites import RewriteHeavyShape, synthetic_rewrite_heavy_table
from devstack.synthetic_table import TableShape, synthetic_table
from worker.connect import connect
from workflows.constants import CHUNK_ACTIVITY, FINALIZE_ACTIVITY, PLAN_ACTIVITY

LOCAL_QUEUE, SPARK_QUEUE = "bench-local", "bench-spark"
FILES_PER_MANIFEST, SNAPSHOTS, DELETE_FILES_PER_SNAPSHOT = 500, 10, 10
WARM_UP_FILES = 100
SHAPES = ("append_only", "rewrite_heavy")


@dataclass
class Measured:
    objects: int
    seconds: float
    left: int = 0
    keys_sent: int | None = None
    planning: float | None = None
    chunks: float | None = None
    finalize: float | None = None
    overlapped: float | None = None
    history_events: int | None = None
    peak_rss_mib: tuple[float, float] | None = None

    @property
    def rate(self) -> float:
        return self.objects / self.seconds


def peak_rss_mib(pid: int) -> tuple[float, float]:
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


def start_workers(stack: EmbeddedStack, tag: str) -> dict[str, ServiceProcess]:
    workers = {
        "local": stack.worker_process(f"bench-local-{tag}", ICEPURGE_TASK_QUEUE=LOCAL_QUEUE),
        "spark": stack.worker_process(
            f"bench-spark-{tag}",
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


@dataclass(frozen=True)
class Contender:
    engine: str
    worker: ServiceProcess
    # Deletes start while planning runs (the default), or once the plan is complete.
    overlap: bool = True


async def icepurge_purge(
    stack: EmbeddedStack, contender: Contender, table: Table, store: BenchStore, template: TableTemplate
) -> Measured:
    engine, worker = contender.engine, contender.worker
    temporal = await connect(stack.temporal_settings())
    client = PurgeClient(temporal, SPARK_QUEUE if engine == "spark" else LOCAL_QUEUE)
    # A catalog name per contender, so each one's purge of the same table has its own id.
    request = request_for_table(
        f"bench-{engine}-{'overlap' if contender.overlap else 'after'}",
        table,
        store.properties,
        "bench",
        engine=engine,
        delete_while_planning=contender.overlap,
    )
    started = time.perf_counter()
    purge_id = await client.start(request)
    report = await client.wait(purge_id)
    seconds = time.perf_counter() - started
    events = 0
    async for execution in temporal.list_workflows(f"WorkflowId='{purge_id}'"):
        events += execution.history_length
    timeline = await purge_timeline(temporal, purge_id)
    total = report.status.counts.total()
    assert worker.pid is not None
    return Measured(
        objects=template.objects,
        seconds=seconds,
        left=template.remaining(),
        keys_sent=total.deleted + total.already_missing + total.failed,
        planning=timeline.seconds(PLAN_ACTIVITY),
        chunks=timeline.seconds(CHUNK_ACTIVITY),
        finalize=timeline.seconds(FINALIZE_ACTIVITY),
        overlapped=timeline.overlap(PLAN_ACTIVITY, CHUNK_ACTIVITY),
        history_events=events,
        peak_rss_mib=peak_rss_mib(worker.pid),
    )


def pyiceberg_purge(store: BenchStore, identifier: tuple[str, str], template: TableTemplate) -> Measured:
    started = time.perf_counter()
    store.catalog.purge_table(identifier)
    return Measured(
        objects=template.objects, seconds=time.perf_counter() - started, left=template.remaining()
    )


def table_of(store: BenchStore, shape: str, size: int) -> tuple[Table, tuple[str, str]]:
    identifier = ("bench", f"{shape}_{size}_{uuid.uuid4().hex[:6]}")
    if shape == "rewrite_heavy":
        table = synthetic_rewrite_heavy_table(
            store.catalog, identifier, RewriteHeavyShape(distinct_files=size), store.write_objects
        )
        return table, identifier
    layout = TableShape(
        manifests=max(1, size // FILES_PER_MANIFEST),
        files_per_manifest=min(size, FILES_PER_MANIFEST),
        snapshots=SNAPSHOTS,
        delete_files_per_snapshot=DELETE_FILES_PER_SNAPSHOT,
    )
    return synthetic_table(store.catalog, identifier, layout, write_objects=store.write_objects), identifier


def _row(label: str, name: str, measured: Measured, ceiling: float, baseline: Measured | None) -> str:
    versus = f"{measured.rate / baseline.rate:.1f}×" if baseline else "–"
    cells = [label, name, f"{measured.rate:,.0f}", f"{measured.rate / ceiling:.2f}×", versus]
    if measured.keys_sent is None:
        cells += ["–"] * 4
    else:
        assert measured.peak_rss_mib is not None
        own, tree = measured.peak_rss_mib
        cells += [
            f"{measured.keys_sent / measured.objects:.2f}",
            f"{measured.planning:.2f} / {measured.chunks:.2f} / {measured.finalize:.2f}"
            f" of {measured.seconds:.2f} ({measured.overlapped:.2f} overlapped)",
            str(measured.history_events),
            f"{own:.0f} MiB" + (f" ({tree:.0f} MiB)" if tree > own + 1 else ""),
        ]
    cells.append(str(measured.left))
    return "| " + " | ".join(cells) + " |"


def warm_up(stack: EmbeddedStack, store: BenchStore, contender: Contender) -> float:
    """A small purge on a fresh worker, which pays what only a worker's first purge pays."""
    table, _ = table_of(store, "append_only", WARM_UP_FILES)
    template = store.template(table.location())
    return asyncio.run(icepurge_purge(stack, contender, table, store, template)).seconds


def compare(stack: EmbeddedStack, store: BenchStore, shape: str, size: int, with_pyiceberg: bool) -> None:
    started = time.perf_counter()
    table, identifier = table_of(store, shape, size)
    template = store.template(table.location())
    label = f"{store.name}, {shape}, {size // 1000}k ({template.objects:,} objects)"
    print(f"<!-- {label}: generated and kept in {time.perf_counter() - started:.0f} s -->", flush=True)
    workers = start_workers(stack, f"{shape}-{size}-{uuid.uuid4().hex[:4]}")
    rows: dict[str, Measured] = {}
    try:
        contenders = {
            "(b) icepurge local": Contender("local", workers["local"]),
            "(b0) local, deletes after planning": Contender("local", workers["local"], overlap=False),
            "(c) icepurge spark": Contender("spark", workers["spark"]),
        }
        # Workers serve for days: what is measured is a warm worker's purge, not its first one.
        first = {engine: warm_up(stack, store, Contender(engine, workers[engine])) for engine in workers}
        print(
            f"<!-- each worker's first purge ({WARM_UP_FILES} files, not measured): "
            + ", ".join(f"{engine} {seconds:.2f} s" for engine, seconds in first.items())
            + " -->",
            flush=True,
        )
        for name, contender in contenders.items():
            rows[name] = asyncio.run(icepurge_purge(stack, contender, table, store, template))
            template.restore()
    finally:
        for worker in workers.values():
            worker.stop()
    baseline = pyiceberg_purge(store, identifier, template) if with_pyiceberg else None
    ceiling = store.ceiling(template.objects)
    print(f"| {label} | (d) raw ceiling | {ceiling:,.0f} | 1.00× | | | | | | |", flush=True)
    if baseline is not None:
        print(_row(label, "(a) PyIceberg purge_table", baseline, ceiling, None), flush=True)
    for name, measured in rows.items():
        print(_row(label, name, measured, ceiling, baseline), flush=True)


def _azurite(root: Path) -> tuple[AzuriteEndpoint, ServiceProcess] | None:
    reason = azurite_unavailable()
    if reason is not None:
        print(f"<!-- Azurite skipped: {reason} -->", flush=True)
        return None
    endpoint = AzuriteEndpoint(free_ports(1)[0])
    server = azurite_server(root, endpoint.port)
    server.start()
    server.wait_for_port(endpoint.port)
    create_containers(endpoint, ["warehouse"])
    return endpoint, server


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", type=int, nargs="*", default=[6_000, 20_000, 100_000])
    parser.add_argument("--shapes", nargs="*", default=list(SHAPES), choices=SHAPES)
    parser.add_argument("--stores", nargs="*", default=["s3", "azure"], choices=["s3", "azure"])
    parser.add_argument("--disk-sizes", type=int, nargs="*", default=[])
    parser.add_argument(
        "--pyiceberg-max",
        type=int,
        default=20_000,
        help="(a) only up to this size: it deletes a file at a time",
    )
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="icepurge-bench-"))
    stack = EmbeddedStack(state_dir=root / "stack", ports=StackPorts.free())
    stack.start()
    azurite = _azurite(root) if "azure" in args.stores else None
    print(
        "| table | contender | distinct objects/s | vs (d) | vs (a) | keys/distinct"
        " | planning / chunks / finalize of total (s), planning and chunks overlapped | history events"
        " | worker peak RSS (with Spark) | left |\n"
        "| --- | --- | ---: | ---: | ---: | ---: | --- | ---: | ---: | ---: |",
        flush=True,
    )
    try:
        stores: list[tuple[BenchStore, list[int]]] = []
        if "s3" in args.stores:
            stores.append((S3BenchStore(stack), args.sizes))
        if azurite is not None:
            stores.append((AzureBenchStore(azurite[0], root), args.sizes))
        if args.disk_sizes:
            stores.append((DiskBenchStore(root), args.disk_sizes))
        for store, sizes in stores:
            for shape in args.shapes:
                for size in sizes:
                    compare(stack, store, shape, size, with_pyiceberg=size <= args.pyiceberg_max)
    finally:
        if azurite is not None:
            azurite[1].stop()
        stack.stop()


if __name__ == "__main__":
    main()
