"""A namespace purge of N small real tables (three appends each: one written by PyIceberg, the rest
its copies, see bench.table_copies) on the embedded stack:
tables/min, files/s against the store's raw bulk-delete ceiling for the same number of keys,
history events per run of the namespace purge and of one table purge, the worker's peak RSS, its
threads' user and system CPU and context switches a table (bench.thread_switches).
The worker runs as its own process, as in production.
Each minute of a long purge, and each whole purge, also print every process's CPU a table and the
host's pace (bench.host_pace).

In the same run, on as many tables of the same shape in namespaces of their own, what a user
would do instead: PyIceberg's `catalog.purge_table` in a loop, sequential and on 8 threads; each
line says how many of those tables' objects are left (0: the loop deleted everything) and each
process's CPU a table while the loop ran (this process is the loop).

    .venv/bin/python -m bench.namespace_purge --tables 1000 --window 16 [--batch-tables 0 8]
        [--workers 1 2] [--s3-clients obstore boto3] [--no-guard] [--no-loops] [--no-ceiling]
        [--profile DIR] [--namespace-tables 1000]
        [--baseline-tables 1000 [--baseline-alone [--baseline-again] | --paired 4]] [--warmup-tables 300]
        [--trace-memory DIR]
        [--count-requests FILE]

With --namespace-tables, the tables sit in child namespaces of that many each and the purge is
recursive, as a catalog's tables sit in many namespaces: the live-table guard lists a table's own
namespace, so its cost follows a namespace's size, not the purge's.

With --profile, py-spy samples the worker's busy threads (its CPU, not its waits) while each
namespace purge runs and writes DIR/<namespace>.raw, for bench.step_phases.

--warmup-tables seeds and purges a namespace of that many tables first, on its own, and leaves its
rate out of every ratio: the first purge on a new stack ran 12-16 % slower than the next, in every
process, SeaweedFS included, so without it a baseline measures the stack's first minutes.

--paired K seeds K namespaces of --baseline-tables beside the big one and purges each alone in a
pause of the big purge, spread over it: each pair reads the big purge's last minute against the
small purge right after it, minutes apart at most, where a baseline before or after a purge of an
hour reads the host's hour as much as the purge's size (bench.paired_baselines).

Each value of --batch-tables is a namespace purge of its own tables (0: a workflow per table; N:
the small-table batches of N), one after the other in the same run.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from temporalio.client import Client

from bench.bench_stack import bench_stack
from bench.counted_worker import COUNT_FILE
from bench.cpu_shares import CpuShares, cpu_shares
from bench.host_pace import HostPace, host_pace
from bench.live_table_pages import pages_line, timed_pages
from bench.memory_growth import growth_lines
from bench.paired_baselines import PairedBaselines
from bench.purge_throughput import bulk_delete_ceiling
from bench.purge_timeline import run_events
from bench.table_copies import copy_table, seeding_order
from bench.thread_switches import thread_switches
from bench.traced_worker import TRACE_DIR
from icepurge.api.clients.listing import PurgeFilter
from icepurge.api.clients.temporal_client import PurgeClient
from icepurge.api.clients.temporal_namespace_client import namespace_request
from icepurge.api.server.namespace_table_pages import NamespaceTablePages
from icepurge.api.server.report_pages import ReportReader
from icepurge.connection.connect import connect
from icepurge.connection.exit_now import run_then_exit
from icepurge.contract.namespace_status import NamespacePurgeReport
from icepurge.devstack.catalog_env import pyiceberg_catalog_env
from icepurge.devstack.process import ServiceProcess
from icepurge.devstack.small_tables import create_demo_table
from icepurge.devstack.stack import EmbeddedStack
from icepurge.stores.registry import open_store
from icepurge.stores.store import StoreContext

QUEUE = "bench-namespace"
CATALOG = "benchlake"
NAMESPACE = ("bench", "retired")


def _namespace(batch_tables: int, workers: int = 1, s3_client: str = "obstore") -> tuple[str, ...]:
    name = (
        NAMESPACE[-1]
        + (f"_batch{batch_tables}" if batch_tables else "")
        + (f"_w{workers}" if workers > 1 else "")
        + (f"_{s3_client}" if s3_client != "obstore" else "")
    )
    return (*NAMESPACE[:-1], name)


# The loops' tables: the same shape, in namespaces of their own.
LOOPS = {"PyIceberg purge_table loop, sequential": 1, "PyIceberg purge_table loop, 8 threads": 8}
COPYING_THREADS = 8
# `purge tables`'s page, as the HTTP API's default.
# A long purge prints where it stands this often: a run stopped early still leaves its rate.
PROGRESS_SECONDS = 60
PROFILE_RATE = 100
TRACED_TOP = 25
SNAPSHOT_SECONDS = 300


def _snapshot(worker: ServiceProcess) -> None:
    """The traced worker's next snapshot, waited for: it writes one per SIGUSR2."""
    trace = Path(worker.env[TRACE_DIR]) if worker.env else None
    assert trace is not None and worker.pid is not None
    written = len(list(trace.glob("*.snapshot")))
    os.kill(worker.pid, signal.SIGUSR2)
    deadline = time.monotonic() + SNAPSHOT_SECONDS
    while len(list(trace.glob("*.snapshot"))) == written:
        assert time.monotonic() < deadline, f"no snapshot in {SNAPSHOT_SECONDS} s: see {worker.log_path}"
        time.sleep(0.5)


def _request_counts(path: Path | None) -> dict[str, int]:
    """The counted worker's requests so far (it writes them every second)."""
    if path is None or not path.exists():
        return {}
    counts: dict[str, int] = json.loads(path.read_text())
    return counts


def _commit() -> str:
    described = subprocess.run(
        ["git", "describe", "--always", "--dirty"], capture_output=True, text=True, check=False
    )
    return described.stdout.strip() or "unknown"


def _worker_pids(worker: ServiceProcess) -> list[int]:
    """The processes doing the work: a supervisor's worker processes, or the worker itself."""
    pid = worker.pid
    assert pid is not None
    children: list[int] = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        # A thread that ended since the listing has no children file.
        with contextlib.suppress(FileNotFoundError):
            children += [int(child) for child in (task / "children").read_text().split()]
    return children or [pid]


def _status_mib(pid: int, field: str) -> float:
    status = Path(f"/proc/{pid}/status").read_text()
    line = next(line for line in status.splitlines() if line.startswith(f"{field}:"))
    return int(line.split()[1]) / 1024


def _peak_rss_mib(worker: ServiceProcess) -> str:
    return " + ".join(f"{_status_mib(pid, 'VmHWM'):,.0f}" for pid in _worker_pids(worker))


def _rss_mib(worker: ServiceProcess) -> str:
    return " + ".join(f"{_status_mib(pid, 'VmRSS'):,.0f}" for pid in _worker_pids(worker))


async def _timeline(client: Client, purge_id: str) -> str:
    """Each activity of one table purge as `name wait/run` (seconds from scheduled to started, and
    from started to completed), and its whole span: where a small table's time goes."""
    events = (await client.get_workflow_handle(purge_id).fetch_history()).events
    first, last = events[0].event_time.ToDatetime(), events[-1].event_time.ToDatetime()
    names, started, parts = {}, {}, []
    for event in events:
        at = event.event_time.ToDatetime()
        if event.HasField("activity_task_scheduled_event_attributes"):
            names[event.event_id] = (event.activity_task_scheduled_event_attributes.activity_type.name, at)
        elif event.HasField("activity_task_started_event_attributes"):
            started[event.activity_task_started_event_attributes.scheduled_event_id] = at
        elif event.HasField("activity_task_completed_event_attributes"):
            scheduled_id = event.activity_task_completed_event_attributes.scheduled_event_id
            name, scheduled = names[scheduled_id]
            begun = started[scheduled_id]
            wait, run = (begun - scheduled).total_seconds(), (at - begun).total_seconds()
            parts.append(f"{name} {wait:.2f}/{run:.2f}")
    return f"{(last - first).total_seconds():.2f} s in all; " + ", ".join(parts)


async def _parent_anatomy(client: Client, purge_id: str) -> str:
    """The namespace workflow's own share: its workflow tasks (queued, then processed) over every
    run, and how many table purges ran at once on average (the window kept full, or not)."""
    tasks = processing = queued = 0.0
    scheduled_at = started_at = None
    running = 0
    busy = 0.0
    span_start = span_end = None
    last_change = None
    async for execution in client.list_workflows(f"WorkflowId = '{purge_id}'"):
        history = await client.get_workflow_handle(purge_id, run_id=execution.run_id).fetch_history()
        for event in history.events:
            at = event.event_time.ToDatetime()
            span_start = at if span_start is None or at < span_start else span_start
            span_end = at if span_end is None or at > span_end else span_end
            if event.HasField("workflow_task_scheduled_event_attributes"):
                scheduled_at = at
            elif event.HasField("workflow_task_started_event_attributes") and scheduled_at:
                queued += (at - scheduled_at).total_seconds()
                started_at = at
            elif event.HasField("workflow_task_completed_event_attributes") and started_at:
                tasks += 1
                processing += (at - started_at).total_seconds()
            change = (
                1
                if event.HasField("child_workflow_execution_started_event_attributes")
                else -1
                if event.HasField("child_workflow_execution_completed_event_attributes")
                or event.HasField("child_workflow_execution_failed_event_attributes")
                else 0
            )
            if change:
                if last_change is not None:
                    busy += running * (at - last_change).total_seconds()
                running += change
                last_change = at
    span = (span_end - span_start).total_seconds() if span_start and span_end else 0.0
    mean_ms = processing / max(tasks, 1) * 1000
    return (
        f"{tasks:.0f} workflow tasks, {processing:.1f} s processing (mean {mean_ms:.0f} ms),"
        f" {queued:.1f} s queued; table purges running at once, on average: {busy / max(span, 1e-9):.1f}"
    )


@dataclass(frozen=True)
class PurgeShape:
    """How each namespace purge of a run is asked for."""

    window: int
    batch_tables: int
    recursive: bool
    guard: bool


async def _started(purges: PurgeClient, namespace: tuple[str, ...], shape: PurgeShape) -> str:
    return await purges.namespaces.start(
        namespace_request(
            CATALOG,
            list(namespace),
            recursive=shape.recursive,
            requested_by="bench",
            max_concurrent_tables=shape.window,
            batch_tables=shape.batch_tables,
            options={"live_table_guard": shape.guard},
        )
    )


async def _started_and_waited(
    purges: PurgeClient,
    namespace: tuple[str, ...],
    shape: PurgeShape,
    *,
    workers: list[ServiceProcess],
    traced: bool,
    shares: CpuShares,
    pace: HostPace,
    pairs: PairedBaselines | None,
) -> tuple[str, NamespacePurgeReport]:
    purge_id = await _started(purges, namespace, shape)
    waited = asyncio.ensure_future(purges.namespaces.wait(purge_id))
    done, started = 0, time.perf_counter()
    spent, mark = shares.seconds_by_role(), pace.mark()
    while not waited.done():
        await asyncio.wait([waited], timeout=PROGRESS_SECONDS)
        if waited.done():
            break
        status = await purges.namespaces.status(purge_id)
        now = status.tables_done
        if traced:
            _snapshot(workers[0])
        rss = ", ".join(_rss_mib(worker) for worker in workers)
        minutes = (time.perf_counter() - started) / 60
        print(
            f"  {time.strftime('%H:%M:%S')} {now:,} tables done ({minutes:.0f} min), "
            f"{now - done:,} in the last minute; worker RSS {rss} MiB\n"
            f"    {shares.per_item_line(now - done, item='table', since=spent)}; {pace.reading(mark)}",
            flush=True,
        )
        if pairs is not None and pairs.due(now, status.tables_total):
            await pairs.pair(purges, purge_id, shares)
            now = (await purges.namespaces.status(purge_id)).tables_done
        done, spent, mark = now, shares.seconds_by_role(), pace.mark()
    return purge_id, waited.result()


async def _purge(
    stack: EmbeddedStack,
    *,
    namespace: tuple[str, ...],
    shape: PurgeShape,
    locations: list[str],
    workers: list[ServiceProcess],
    profile: Path | None,
    trace: Path | None,
    ceiling: bool,
    counted: Path | None,
    paired: list[tuple[tuple[str, ...], list[str]]],
) -> float:
    """Purges the namespace, prints what it measured; returns its tables/min (with `paired`
    baselines, the time it stood paused for them left out)."""
    print(f"namespace {'.'.join(namespace)}, purged:", flush=True)
    counted_before = _request_counts(counted)
    client = await connect(stack.temporal_settings())
    purges = PurgeClient(client, QUEUE)
    pairs = (
        PairedBaselines([name for name, _ in paired], lambda baseline: _started(purges, baseline, shape))
        if paired
        else None
    )
    started = time.perf_counter()
    with _profiled(workers[0], profile / f"{'.'.join(namespace)}.raw" if profile else None):
        async with (
            cpu_shares() as shares,
            thread_switches(_worker_pids(workers[0])) as switches,
            host_pace() as pace,
        ):
            whole = pace.mark()
            purge_id, report = await _started_and_waited(
                purges,
                namespace,
                shape,
                workers=workers,
                traced=trace is not None,
                shares=shares,
                pace=pace,
                pairs=pairs,
            )
            host = pace.reading(whole)
    seconds = time.perf_counter() - started - (pairs.paused_seconds if pairs else 0.0)
    status = report.status
    files_per_second = status.files.deleted / seconds
    print(
        f"  namespace purge: {status.state.value}, {status.tables_done}/{status.tables_total} tables, "
        f"{status.files.deleted:,} files in {seconds:.1f} s"
        + (f" (its {pairs.paused_seconds:.0f} s paused for the pairs left out)" if pairs else "")
    )
    if pairs is not None:
        print("\n".join(f"  {line}" for line in pairs.summary(status.tables_done / seconds * 60)))
        for baseline, baseline_locations in paired:
            print(f"  {'.'.join(baseline)}: objects left {_objects_left(stack, baseline_locations)}")
    print(
        f"  tables/min: {status.tables_done / seconds * 60:,.0f}; files/s: {files_per_second:,.0f}; "
        f"objects left: {_objects_left(stack, locations)}"
    )
    await asyncio.sleep(2)
    runs = await run_events(client, purge_id)
    print(f"  namespace purge history: {len(runs)} runs, events per run max {max(runs)}, total {sum(runs)}")
    print(f"  namespace workflow: {await _parent_anatomy(client, purge_id)}")
    print(f"  {shares.line()}")
    print(f"  {shares.per_item_line(status.tables_done, item='table')}; {host}")
    print(f"  {switches.line(status.tables_done, 'table')}")
    if counted is not None:
        print("  the worker's S3 requests a table, by what sent them (bench.counted_worker):")
        after = _request_counts(counted)
        for label, count in sorted(after.items(), key=lambda item: -item[1]):
            if count > counted_before.get(label, 0):
                print(f"    {(count - counted_before.get(label, 0)) / status.tables_done:6.2f}  {label}")
    children = (await purges.list(PurgeFilter(parent=purge_id), page_size=1)).items
    if children:
        child = children[0].purge_id
        print(f"  one table purge's history: {sum(await run_events(client, child))} events")
        print(f"  one table purge's timeline: {await _timeline(client, child)}")
    print(f"  {await _table_pages(purges, stack, purge_id, status.tables_total)}")
    if trace is not None:
        _snapshot(workers[0])
        snapshots = sorted(trace.glob("*.snapshot"))
        print(f"  the traced worker's growth from {snapshots[0].name} to {snapshots[-1].name}:")
        print("\n".join(f"    {line}" for line in growth_lines(snapshots[0], snapshots[-1], TRACED_TOP)))
    if ceiling:
        keys_per_second = bulk_delete_ceiling(stack, status.files.deleted)
        print(
            f"  raw bulk-delete ceiling for {status.files.deleted:,} keys: {keys_per_second:,.0f} keys/s; "
            f"namespace purge at {files_per_second / keys_per_second:.3f}x"
        )
    return status.tables_done / seconds * 60


@contextlib.contextmanager
def _profiled(worker: ServiceProcess, raw: Path | None) -> Iterator[None]:
    """py-spy on the worker and its processes while the block runs, at PROFILE_RATE samples a
    second: only the thread holding the GIL is sampled (Python's CPU, not its waits), and the
    worker is never paused to take one (py-spy pauses it by default, which slowed the purge 4x)."""
    if raw is None:
        yield
        return
    raw.parent.mkdir(parents=True, exist_ok=True)
    spy = Path(sys.executable).parent / "py-spy"
    command = [str(spy), "record", "-p", str(worker.pid), "--subprocesses", "--nonblocking", "--gil"]
    recorder = subprocess.Popen(
        [*command, "-r", str(PROFILE_RATE), "--format", "raw", "-o", str(raw)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        yield
    finally:
        recorder.send_signal(signal.SIGINT)
        recorder.wait(timeout=60)
        print(f"  profile: {raw} ({PROFILE_RATE} samples a second)", flush=True)


async def _table_pages(purges: PurgeClient, stack: EmbeddedStack, purge_id: str, tables: int) -> str:
    """`purge tables` to the end, a page at a time, as the API answers it: each page's seconds."""
    reader = ReportReader(stack.worker_env()["ICEPURGE_STATE_LOCATION"], stack.s3_properties)
    listed, seconds = await timed_pages(NamespaceTablePages(purges, reader, purge_id, None))
    return f"purge tables: {listed:,} of {tables:,} listed in {pages_line(seconds)}"


def _objects_left(stack: EmbeddedStack, locations: list[str]) -> int:
    """Listed directly under each table's prefix, directory markers left out."""
    left = 0
    for location in locations:
        store = open_store(location, StoreContext(stack.s3_properties))
        token: str | None = None
        while True:
            page = store.list_page(location, token, 1000, flat=False)
            left += sum(1 for listed in page.objects if not listed.uri.endswith("/"))
            token = page.next_token
            if token is None:
                break
    return left


def _create_tables(
    stack: EmbeddedStack, namespace: tuple[str, ...], count: int, per_namespace: int | None
) -> list[str]:
    """The tables' locations: the first written by PyIceberg, the rest its copies (writing 10,000
    through PyIceberg took ~18 min a namespace here, see bench.table_copies). With `per_namespace`,
    in child namespaces of that many tables each (`n000`, `n001`, ...), a template in each."""
    if per_namespace is None:
        return _tables_in(stack, namespace, range(count))
    started, seeded = time.perf_counter(), 0
    firsts = {
        (*namespace, f"n{child:03d}"): first for child, first in enumerate(range(0, count, per_namespace))
    }
    locations: dict[tuple[str, ...], list[str]] = {}
    for child in seeding_order(firsts):
        first = firsts[child]
        end = min(first + per_namespace, count)
        locations[child] = _tables_in(stack, child, range(first, end))
        seeded += end - first
        # Seeding 10^5 tables takes most of an hour: this tells where it stands. Reading the
        # catalog's SQLite file instead takes the lock its writers wait on.
        print(
            f"seeding {'.'.join(namespace)}: {seeded:,} of {count:,} tables "
            f"({time.perf_counter() - started:.0f} s)",
            file=sys.stderr,
            flush=True,
        )
    return [location for child in firsts for location in locations[child]]


def _tables_in(stack: EmbeddedStack, namespace: tuple[str, ...], indexes: range) -> list[str]:
    catalog = stack.catalog(CATALOG)
    template = create_demo_table(catalog, namespace, _table_name(indexes[0]))
    names = [_table_name(index) for index in indexes[1:]]
    return [template.location(), *copy_table(catalog, template, names, stack.s3_properties, COPYING_THREADS)]


def _table_name(index: int) -> str:
    return f"t{index:05d}"


def _loop(stack: EmbeddedStack, label: str, threads: int, count: int) -> None:
    """A fresh catalog object per thread, as a user's loop on threads would hold."""
    namespace = ("bench", f"loop{threads}")
    locations = _create_tables(stack, namespace, count, None)
    catalogs = [stack.catalog(CATALOG) for _ in range(threads)]

    def purge_every(worker: int) -> None:
        for index in range(worker, count, threads):
            catalogs[worker].purge_table((*namespace, _table_name(index)))

    shares = CpuShares()
    shares.sample()
    started = time.perf_counter()
    with ThreadPoolExecutor(threads) as pool:
        list(pool.map(purge_every, range(threads)))
    seconds = time.perf_counter() - started
    shares.sample()
    left = _objects_left(stack, locations)
    rate = count / seconds * 60
    print(f"  {label}: {count} tables in {seconds:.1f} s, tables/min {rate:,.0f}; objects left: {left}")
    print(f"    {shares.per_item_line(count, item='table')}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--tables", type=int, default=1000)
    parser.add_argument("--window", type=int, default=16, help="max_concurrent_tables")
    parser.add_argument(
        "--no-guard", action="store_true", help="live_table_guard off: what the guard costs per table"
    )
    parser.add_argument("--no-loops", action="store_true", help="skip the PyIceberg purge_table loops")
    parser.add_argument(
        "--no-ceiling",
        action="store_true",
        help="skip the raw bulk-delete ceiling after each purge: at 10^5 tables it writes 1.3M objects",
    )
    parser.add_argument(
        "--namespace-tables",
        type=int,
        default=None,
        help="spread the tables over child namespaces of this many each, purged recursively, as a "
        "catalog's tables sit in many namespaces (unset: all in one)",
    )
    parser.add_argument(
        "--activity-slots", type=int, default=None, help="the worker's ICEPURGE_MAX_CONCURRENT_ACTIVITIES"
    )
    parser.add_argument(
        "--workers",
        type=int,
        nargs="+",
        default=[1],
        help="processes of the one `icepurge worker` (ICEPURGE_WORKER_PROCESSES): each value runs every "
        "--batch-tables purge on tables of its own",
    )
    parser.add_argument(
        "--batch-tables",
        type=int,
        nargs="+",
        default=[0],
        help="a namespace purge per value, on tables of its own: 0 a workflow per table, N batches of N",
    )
    parser.add_argument(
        "--s3-clients",
        nargs="+",
        default=["obstore"],
        choices=["obstore", "boto3"],
        help="the worker's ICEPURGE_S3_CLIENT: each value runs every --workers value on tables of its own",
    )
    parser.add_argument(
        "--profile", type=Path, default=None, help="a folder for py-spy's profile of each purge"
    )
    parser.add_argument(
        "--baseline-tables",
        type=int,
        default=None,
        help="first purge a namespace of this many tables, spread the same way and seeded with the "
        "big one (the store then holds both): the run ends with the big purge's tables/min against it",
    )
    parser.add_argument(
        "--baseline-alone",
        action="store_true",
        help="seed and purge the --baseline-tables namespace before the big one is seeded, so each "
        "purge runs in a catalog and store of its own size",
    )
    parser.add_argument(
        "--trace-memory",
        type=Path,
        default=None,
        help="a folder for the worker's tracemalloc snapshots, one a minute (bench.traced_worker); the "
        "run ends with what grew most from the first to the last (its rates mean nothing then)",
    )
    parser.add_argument(
        "--count-requests",
        type=Path,
        default=None,
        help="a file for the worker's S3 requests by what sent them (bench.counted_worker); the run "
        "prints them a table (its rates and CPU mean nothing then)",
    )
    parser.add_argument(
        "--baseline-again",
        action="store_true",
        help="with --baseline-alone, seed and purge a second baseline namespace after the big purge: "
        "the host's pace drifts over a run of an hour, so the big purge is read against both",
    )
    parser.add_argument(
        "--warmup-tables",
        type=int,
        default=0,
        help="first seed and purge a namespace of this many tables on its own, left out of every ratio",
    )
    parser.add_argument(
        "--paired",
        type=int,
        default=0,
        help="with --baseline-tables, seed this many baseline namespaces beside the big one and purge "
        "each in a pause of the big purge, spread over it (bench.paired_baselines)",
    )
    arguments = parser.parse_args()
    if arguments.paired and (not arguments.baseline_tables or arguments.baseline_alone):
        parser.error(
            "--paired purges --baseline-tables namespaces inside the big purge: give their size, "
            "without --baseline-alone"
        )
    if arguments.paired < 0:
        parser.error("--paired counts the pauses of the big purge: give 0 or more")
    if arguments.baseline_again and not arguments.baseline_alone:
        parser.error("--baseline-again seeds its namespace after the big purge: add --baseline-alone")
    if arguments.trace_memory is not None and arguments.count_requests is not None:
        parser.error("--trace-memory and --count-requests each run a worker of their own: pick one")
    if arguments.warmup_tables < 0:
        parser.error("--warmup-tables counts the tables of the warm-up purge: give 0 or more")
    if arguments.baseline_alone and not arguments.baseline_tables:
        parser.error("--baseline-alone purges the --baseline-tables namespace first: give its size")
    with bench_stack("icepurge-bench-namespace-") as (_, stack):
        os.environ.update(pyiceberg_catalog_env(CATALOG, stack.catalog_properties(CATALOG)))
        for s3_client in arguments.s3_clients:
            for count in arguments.workers:
                _with_workers(stack, arguments, count, s3_client)
        if not arguments.no_loops:
            for label, threads in LOOPS.items():
                _loop(stack, label, threads, arguments.tables)


def _seeded(
    stack: EmbeddedStack,
    arguments: argparse.Namespace,
    *,
    namespace: tuple[str, ...],
    tables: int,
    batch_tables: int,
    count: int,
    s3_client: str,
) -> list[str]:
    started = time.perf_counter()
    locations = _create_tables(stack, namespace, tables, arguments.namespace_tables)
    spread = (
        ""
        if arguments.namespace_tables is None
        else f" in child namespaces of {arguments.namespace_tables:,} (purged recursively)"
    )
    print(
        f"namespace {'.'.join(namespace)}: {tables} tables of three appends{spread}, "
        f"copies of one (created in {time.perf_counter() - started:.0f} s), "
        f"window {arguments.window}, "
        f"batch_tables {batch_tables}, activity slots {arguments.activity_slots or 'default'}, "
        f"{count} worker process(es), S3 client {s3_client}, 2 cores, live-table guard "
        f"{'off' if arguments.no_guard else 'on'}",
        flush=True,
    )
    return locations


def _seeded_and_purged(
    stack: EmbeddedStack,
    arguments: argparse.Namespace,
    worker: ServiceProcess,
    shape: tuple[int, int, str],
    purges: list[tuple[tuple[str, ...], int]],
    *,
    paired: list[tuple[tuple[str, ...], int]] | None = None,
) -> list[float]:
    """Seeds every namespace of `purges` and `paired` (batch tables, worker processes, S3 client:
    `shape`) in bench.table_copies.seeding_order, then purges those of `purges` in order on
    `worker`, started once the first seeding is over; returns their tables/min. The `paired` ones
    are purged in pauses of the last purge (bench.paired_baselines)."""
    batch_tables, count, s3_client = shape

    def seeded_each(namespaces: list[tuple[tuple[str, ...], int]]) -> list[list[str]]:
        return [
            _seeded(
                stack,
                arguments,
                namespace=purged,
                tables=tables,
                batch_tables=batch_tables,
                count=count,
                s3_client=s3_client,
            )
            for purged, tables in namespaces
        ]

    sizes = dict(purges + (paired or []))
    order = seeding_order(sizes)
    seeded = dict(zip(order, seeded_each([(name, sizes[name]) for name in order]), strict=True))
    paired_seeded = [(name, seeded[name]) for name, _ in paired or []]
    if worker.pid is None:
        # After the seeding, which takes most of a big run: its CPU and memory stay out of the
        # worker's figures.
        worker.start()
        print(f"worker started on commit {_commit()}", flush=True)
        deadline = time.monotonic() + 120
        while worker.log_path.read_text(errors="replace").count("icepurge worker polling") < count:
            assert time.monotonic() < deadline and worker.running(), f"see {worker.log_path}"
            time.sleep(0.5)
    purge_shape = PurgeShape(
        arguments.window, batch_tables, arguments.namespace_tables is not None, not arguments.no_guard
    )
    return [
        asyncio.run(
            _purge(
                stack,
                namespace=purged,
                shape=purge_shape,
                locations=seeded[purged],
                workers=[worker],
                profile=arguments.profile,
                trace=arguments.trace_memory,
                ceiling=not arguments.no_ceiling,
                counted=arguments.count_requests,
                paired=paired_seeded if index == len(purges) - 1 else [],
            )
        )
        for index, (purged, _) in enumerate(purges)
    ]


def _with_workers(stack: EmbeddedStack, arguments: argparse.Namespace, count: int, s3_client: str) -> None:
    """Every --batch-tables purge with one `icepurge worker` of `count` processes on the queue."""
    slots = (
        {}
        if arguments.activity_slots is None
        else {"ICEPURGE_MAX_CONCURRENT_ACTIVITIES": str(arguments.activity_slots)}
    )
    name = f"bench-namespace-worker{count}-{s3_client}"
    env = stack.worker_env(
        ICEPURGE_TASK_QUEUE=QUEUE, ICEPURGE_WORKER_PROCESSES=str(count), ICEPURGE_S3_CLIENT=s3_client, **slots
    )
    command = [sys.executable, "-m", "icepurge.api.cli.main", "worker"]
    if arguments.trace_memory is not None:
        env[TRACE_DIR] = str(arguments.trace_memory)
        command = [sys.executable, "-m", "bench.traced_worker"]
    if arguments.count_requests is not None:
        env[COUNT_FILE] = str(arguments.count_requests)
        command = [sys.executable, "-m", "bench.counted_worker"]
    worker = ServiceProcess(name, command, stack.state_dir / "logs" / f"{name}.log", env=env)
    try:
        for batch_tables in arguments.batch_tables:
            namespace = _namespace(batch_tables, count, s3_client)
            purges = [(namespace, arguments.tables)]
            paired = [
                ((*namespace[:-1], f"{namespace[-1]}_pair{index}"), arguments.baseline_tables)
                for index in range(arguments.paired)
            ]
            if arguments.baseline_tables and not paired:
                baseline = (*namespace[:-1], f"{namespace[-1]}_baseline")
                purges.insert(0, (baseline, arguments.baseline_tables))
            if arguments.baseline_again:
                again = (*namespace[:-1], f"{namespace[-1]}_baseline_again")
                purges.append((again, arguments.baseline_tables))
            # Alone, the baseline is seeded and purged before the big namespace is seeded: each
            # purge then runs in a catalog and store of its own size.
            stages = [[purge] for purge in purges] if arguments.baseline_alone else [purges]
            if arguments.warmup_tables:
                warmup = (*namespace[:-1], f"{namespace[-1]}_warmup")
                stages.insert(0, [(warmup, arguments.warmup_tables)])
            shape = (batch_tables, count, s3_client)
            rates = [
                rate
                for stage in stages
                for rate in _seeded_and_purged(
                    stack, arguments, worker, shape, stage, paired=paired if stage is stages[-1] else None
                )
            ][1 if arguments.warmup_tables else 0 :]
            baselines = rates[::2] if arguments.baseline_tables and not paired else []
            for baseline_rate, when in zip(baselines, ("before", "after"), strict=False):
                print(
                    f"  {arguments.tables:,} tables at {rates[1] / baseline_rate:.2f}x the tables/min of "
                    f"{arguments.baseline_tables:,} {when} it on the same stack and store ({rates[1]:,.0f} "
                    f"against {baseline_rate:,.0f})",
                    flush=True,
                )
        print(f"  worker peak RSS: {_peak_rss_mib(worker)} MiB", flush=True)
    finally:
        worker.stop()


if __name__ == "__main__":
    run_then_exit(main)
