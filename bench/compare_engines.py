"""icepurge against what a user could pick instead, in one run, on the very same tables: per
store, shape and size, (a) PyIceberg `purge_table`, (b) the icepurge local engine, (c) the icepurge
Spark engine (local[2,4]), against (d) the raw ceiling: as many distinct keys deleted with the
store's own bulk delete and no metadata work (S3 DeleteObjects of 1000, Azure Blob Batch of 256,
unlink on disk; 8 threads), and (e) the physical limit: the raw fetch of every metadata object
the purge must read (16 in flight: bench/physical_limit.py) plus (d)'s delete of the distinct
objects.

Shapes: append-only (10 snapshots, data manifests of 500 files, 10 position-delete files per
snapshot) and rewrite-heavy (merge-appends listing earlier files again, copy-on-write rewrites,
the oldest snapshots expired: icepurge/devstack/synthetic_rewrites.py). Each table is generated once and
restored before each contender. Rates count distinct objects (every object the table owned:
content files, manifests, manifest lists, metadata and statistics files). "keys/distinct" is
what the purge's own accounting says it sent (deleted + already missing + failed) over the
distinct objects. Planning, chunk and finalize seconds come from the purge's workflow history.
Workers start per table, so their peak RSS is per table; each worker purges a small table first
(its duration is printed, not measured), so what is measured is a warm worker's purge, as in
service.

(b) starts deleting while planning only when planning projects enough left to read
(ICEPURGE_OVERLAP_MIN_SECONDS, 0.5 s); (b0) never does, (b1) always does. With
`--read-latency-ms`, the icepurge contenders reach SeaweedFS through a loopback proxy that holds
each GET that long, as a store across a network would; deletes pass without delay.

    .venv/bin/python -m bench.compare_engines --sizes 6000 20000 100000 --stores s3 azure
    .venv/bin/python -m bench.compare_engines --sizes 6000 20000 --stores s3 --contenders b b0 b1 \
        --read-latency-ms 20 --pyiceberg-max 0

With `--service-cpus 1`, SeaweedFS and the Temporal server run on core 1 and this process, its
workers and (e)'s raw reads and deletes on the others (bench.cpu_pinning), as a store and a
cluster of their own would: the purge's CPU then no longer takes the store's.
"""

from __future__ import annotations

import argparse
import asyncio
import time
import uuid
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path

from pyiceberg.table import Table

from bench.bench_stack import bench_stack
from bench.bench_stores import AzureBenchStore, BenchStore, DiskBenchStore, S3BenchStore
from bench.cpu_pinning import add_service_cpus_option, pin_services_if_asked
from bench.iceberg_own_purge import IcebergOwnPurges, iceberg_own_purges
from bench.physical_limit import metadata_objects, read_limit
from bench.purge_timeline import planning_step, purge_timeline
from bench.table_templates import TableTemplate
from icepurge.api.clients.temporal_client import PurgeClient
from icepurge.connection.connect import connect
from icepurge.connection.exit_now import run_then_exit
from icepurge.contract.names import CHUNK_ACTIVITY, FINALIZE_ACTIVITY, PLAN_AND_FINISH_ACTIVITY
from icepurge.devstack.azurite import AzuriteEndpoint, azurite_server, azurite_unavailable, create_containers
from icepurge.devstack.free_ports import free_ports
from icepurge.devstack.process import WORKER_READY, ServiceProcess
from icepurge.devstack.requests import request_for_table
from icepurge.devstack.s3_proxy import s3_proxy, through_proxy
from icepurge.devstack.stack import WAREHOUSE_BUCKET, EmbeddedStack
from icepurge.devstack.synthetic_rewrites import RewriteHeavyShape, synthetic_rewrite_heavy_table
from icepurge.devstack.synthetic_table import TableShape, synthetic_table

LOCAL_QUEUE, EAGER_QUEUE, SPARK_QUEUE = "bench-local", "bench-eager", "bench-spark"
FILES_PER_MANIFEST, SNAPSHOTS, DELETE_FILES_PER_SNAPSHOT = 500, 10, 10
WARM_UP_FILES = 100
SHAPES = ("append_only", "rewrite_heavy")
# Columns of the output's table.
_COLUMNS = 11


@dataclass
class Measured:
    objects: int
    seconds: float
    left: int = 0
    purge_id: str = ""
    keys_sent: int | None = None
    planning: float | None = None
    chunks: float | None = None
    finalize: float | None = None
    overlapped: float | None = None
    # A small purge by snapshot planned, deleted and finalized in one step (plan_and_finish_small).
    one_step: float = 0.0
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


@dataclass(frozen=True)
class Contender:
    name: str
    engine: str
    queue: str
    # Deletes may start while planning runs (the default), or only once the plan is complete.
    overlap: bool = True
    # The express lane: a small purge by snapshot takes one step (the default), or every step.
    express: bool = True

    @property
    def slug(self) -> str:
        return self.name.split(")")[0].strip("(")


CONTENDERS = {
    contender.slug: contender
    for contender in (
        Contender("(b) icepurge local", "local", LOCAL_QUEUE),
        Contender("(b0) local, deletes after planning", "local", LOCAL_QUEUE, overlap=False),
        Contender("(b1) local, deletes while planning from the first chunk", "local", EAGER_QUEUE),
        Contender("(c) icepurge spark", "spark", SPARK_QUEUE),
        Contender("(bs) local, step by step", "local", LOCAL_QUEUE, express=False),
    )
}


def start_workers(stack: EmbeddedStack, tag: str, queues: set[str]) -> dict[str, ServiceProcess]:
    workers = {
        LOCAL_QUEUE: stack.worker_process(f"bench-local-{tag}", ICEPURGE_TASK_QUEUE=LOCAL_QUEUE),
        EAGER_QUEUE: stack.worker_process(
            f"bench-eager-{tag}", ICEPURGE_TASK_QUEUE=EAGER_QUEUE, ICEPURGE_OVERLAP_MIN_SECONDS="0"
        ),
        SPARK_QUEUE: stack.worker_process(
            f"bench-spark-{tag}",
            ICEPURGE_TASK_QUEUE=SPARK_QUEUE,
            ICEPURGE_SPARK_MASTER="local[2,4]",
            ICEPURGE_SPARK_CONF='{"spark.ui.enabled": "false"}',
        ),
    }
    workers = {queue: worker for queue, worker in workers.items() if queue in queues}
    for worker in workers.values():
        worker.start()
    for worker in workers.values():
        worker.wait_for_log(WORKER_READY)
    return workers


async def icepurge_purge(
    stack: EmbeddedStack,
    contender: Contender,
    *,
    worker: ServiceProcess,
    table: Table,
    properties: dict[str, str],
    template: TableTemplate,
    attempt: int = 0,
) -> Measured:
    temporal = await connect(stack.temporal_settings())
    client = PurgeClient(temporal, contender.queue)
    # A catalog name per contender and attempt, so each purge of the same table has its own id.
    request = request_for_table(
        f"bench-{contender.slug}-{attempt}",
        table,
        properties,
        "bench",
        engine=contender.engine,
        delete_while_planning=contender.overlap,
        express_lane=contender.express,
    )
    started = time.perf_counter()
    purge_id = await client.start(request)
    report = await client.wait(purge_id)
    seconds = time.perf_counter() - started
    # The histories themselves: a run just closed can still be listed with a history length of 0.
    timeline = await purge_timeline(temporal, purge_id)
    planning = planning_step(timeline)
    total = report.status.counts.total()
    assert worker.pid is not None
    return Measured(
        objects=template.objects,
        seconds=seconds,
        left=template.remaining(),
        purge_id=purge_id,
        keys_sent=total.deleted + total.already_missing + total.failed,
        planning=timeline.seconds(planning),
        chunks=timeline.seconds(CHUNK_ACTIVITY),
        finalize=timeline.seconds(FINALIZE_ACTIVITY),
        overlapped=timeline.overlap(planning, CHUNK_ACTIVITY),
        one_step=timeline.seconds(PLAN_AND_FINISH_ACTIVITY),
        history_events=timeline.events,
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


@dataclass(frozen=True)
class Limits:
    """Distinct objects/s of (d), the raw delete, and of (e), the raw reads then the raw delete."""

    ceiling: float
    physical: float


def _row(label: str, name: str, measured: Measured, limits: Limits, baseline: Measured | None) -> str:
    versus = f"{measured.rate / baseline.rate:.1f}×" if baseline else "–"
    cells = [
        label,
        name,
        f"{measured.rate:,.0f}",
        f"{measured.rate / limits.ceiling:.2f}×",
        f"{measured.rate / limits.physical:.2f}×",
        versus,
    ]
    if measured.keys_sent is None:
        cells += ["–"] * 4
    else:
        assert measured.peak_rss_mib is not None
        own, tree = measured.peak_rss_mib
        steps = (
            f"one step {measured.one_step:.2f} of {measured.seconds:.2f}"
            if measured.one_step and not measured.chunks
            else f"{measured.planning:.2f} / {measured.chunks:.2f} / {measured.finalize:.2f}"
            f" of {measured.seconds:.2f} ({measured.overlapped:.2f} overlapped)"
        )
        cells += [
            f"{measured.keys_sent / measured.objects:.2f}",
            steps,
            str(measured.history_events),
            f"{own:.0f} MiB" + (f" ({tree:.0f} MiB)" if tree > own + 1 else ""),
        ]
    cells.append(str(measured.left))
    return "| " + " | ".join(cells) + " |"


@dataclass(frozen=True)
class Run:
    contenders: list[Contender]
    # FileIO properties the icepurge contenders purge with (through the latency proxy, if any).
    properties: dict[str, str]
    with_pyiceberg: bool
    # Purges per contender, taken in turns; the median one is reported.
    repeat: int = 1
    # Iceberg's own purges, (f) and (g) (bench/iceberg_own_purge.py), when asked for.
    own: IcebergOwnPurges | None = None


def warm_up(
    stack: EmbeddedStack, store: BenchStore, contender: Contender, worker: ServiceProcess, run: Run
) -> float:
    """A small purge on a fresh worker, which pays what only a worker's first purge pays."""
    table, _ = table_of(store, "append_only", WARM_UP_FILES)
    template = store.template(table.location())
    purge = icepurge_purge(
        stack, contender, worker=worker, table=table, properties=run.properties, template=template
    )
    return asyncio.run(purge).seconds


def purges_in_turns(
    stack: EmbeddedStack, store: BenchStore, run: Run, table: Table, *, template: TableTemplate, tag: str
) -> dict[str, list[Measured]]:
    """Each contender purges `table` `run.repeat` times, in turns, restored after each purge."""
    queues = {contender.queue for contender in run.contenders}
    workers = start_workers(stack, f"{tag}-{uuid.uuid4().hex[:4]}", queues)
    measured: dict[str, list[Measured]] = {contender.name: [] for contender in run.contenders}
    try:
        # Workers serve for days: what is measured is a warm worker's purge, not its first one.
        warmed = {contender.queue: contender for contender in run.contenders}
        firsts = {queue: warm_up(stack, store, first, workers[queue], run) for queue, first in warmed.items()}
        print(
            f"<!-- each worker's first purge ({WARM_UP_FILES} files, not measured): "
            + ", ".join(f"{queue} {seconds:.2f} s" for queue, seconds in firsts.items())
            + " -->",
            flush=True,
        )
        for attempt in range(run.repeat):
            for contender in run.contenders:
                purge = icepurge_purge(
                    stack,
                    contender,
                    worker=workers[contender.queue],
                    table=table,
                    properties=run.properties,
                    template=template,
                    attempt=attempt,
                )
                measured[contender.name].append(asyncio.run(purge))
                template.restore()
    finally:
        for worker in workers.values():
            worker.stop()
    return measured


def compare(stack: EmbeddedStack, store: BenchStore, shape: str, size: int, run: Run) -> None:
    started = time.perf_counter()
    table, identifier = table_of(store, shape, size)
    template = store.template(table.location())
    label = f"{store.name}, {shape}, {size // 1000}k ({template.objects:,} objects)"
    print(f"<!-- {label}: generated and kept in {time.perf_counter() - started:.0f} s -->", flush=True)
    reads = read_limit(metadata_objects(table, store.properties), store.properties)
    measured = purges_in_turns(stack, store, run, table, template=template, tag=f"{shape}-{size}")
    own = iceberg_own(run.own, table, template) if run.own is not None else {}
    baseline = pyiceberg_purge(store, identifier, template) if run.with_pyiceberg else None
    ceiling = store.ceiling(template.objects)
    deletes = template.objects / ceiling
    limits = Limits(ceiling, template.objects / (reads.seconds + deletes))
    physical = (
        f"(e) physical limit: {reads.objects:,} metadata reads {reads.seconds:.2f} s"
        f" + (d)'s deletes {deletes:.2f} s"
    )
    for cells in (
        [label, "(d) raw ceiling", f"{ceiling:,.0f}", "1.00×", ""],
        [label, physical, f"{limits.physical:,.0f}", f"{limits.physical / ceiling:.2f}×", "1.00×"],
    ):
        print("| " + " | ".join(cells + [""] * (_COLUMNS - len(cells))) + " |", flush=True)
    if baseline is not None:
        print(_row(label, "(a) PyIceberg purge_table", baseline, limits, None), flush=True)
    for name, purges in measured.items():
        if len(purges) > 1:
            seconds = ", ".join(f"{purge.seconds:.2f}" for purge in purges)
            print(f"<!-- {name}: {seconds} s; the median is shown -->", flush=True)
        median = sorted(purges, key=lambda purge: purge.seconds)[len(purges) // 2]
        print(_row(label, name, median, limits, baseline), flush=True)
    for name, purged in own.items():
        print(_row(label, name, purged, limits, baseline), flush=True)


def iceberg_own(own: IcebergOwnPurges, table: Table, template: TableTemplate) -> dict[str, Measured]:
    """(f) and (g), each on the table restored after it."""
    measured = {}
    for name, purge in (
        ("(f) Spark DROP TABLE … PURGE (Iceberg 1.12, its own inline purge)", own.spark_drop_purge),
        ("(g) Iceberg REST server purge (CatalogUtil.dropTableData)", own.server_purge),
    ):
        seconds, left = purge(table, template)
        measured[name] = Measured(objects=template.objects, seconds=seconds, left=left)
        template.restore()
    return measured


@contextmanager
def _read_latency(stack: EmbeddedStack, store: BenchStore, milliseconds: float) -> Iterator[dict[str, str]]:
    if not milliseconds or not isinstance(store, S3BenchStore):
        yield store.properties
        return
    print(f"<!-- {store.name}: each GET of the icepurge contenders held {milliseconds:g} ms -->", flush=True)
    with s3_proxy(stack.ports.s3) as (port, faults):
        faults.read_delay = milliseconds / 1000
        yield through_proxy(store.properties, port)


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
    parser.add_argument("--contenders", nargs="*", default=list(CONTENDERS), choices=list(CONTENDERS))
    parser.add_argument("--repeat", type=int, default=1, help="purges per contender; the median is shown")
    parser.add_argument(
        "--iceberg-own",
        action="store_true",
        help="SeaweedFS only: (f) Spark's own DROP TABLE … PURGE and (g) Iceberg's REST server "
        "purge (make engines)",
    )
    parser.add_argument(
        "--read-latency-ms",
        type=float,
        default=0.0,
        help="SeaweedFS only: each GET the icepurge contenders send is held this long",
    )
    add_service_cpus_option(parser)
    args = parser.parse_args()
    with bench_stack("icepurge-bench-") as (root, stack):
        azurite = _azurite(root) if "azure" in args.stores else None
        pin_services_if_asked(args.service_cpus)
        print(
            "| table | contender | distinct objects/s | vs (d) | vs (e) | vs (a) | keys/distinct"
            " | planning / chunks / finalize of total (s), planning and chunks overlapped | history events"
            " | worker peak RSS (with Spark) | left |\n"
            "| --- | --- | ---: | ---: | ---: | ---: | ---: | --- | ---: | ---: | ---: |",
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
            contenders = [CONTENDERS[slug] for slug in args.contenders]
            with ExitStack() as own_stack:
                own = (
                    own_stack.enter_context(
                        iceberg_own_purges(stack, f"s3://{WAREHOUSE_BUCKET}/bench-own", root)
                    )
                    if args.iceberg_own
                    else None
                )
                for store, sizes in stores:
                    with _read_latency(stack, store, args.read_latency_ms) as properties:
                        for shape in args.shapes:
                            for size in sizes:
                                run = Run(
                                    contenders,
                                    properties,
                                    size <= args.pyiceberg_max,
                                    args.repeat,
                                    own if isinstance(store, S3BenchStore) else None,
                                )
                                compare(stack, store, shape, size, run)
        finally:
            if azurite is not None:
                azurite[1].stop()


if __name__ == "__main__":
    run_then_exit(main)
