"""The namespace purge's control plane alone: the real PurgeNamespace (and PurgeTable) workflows on
the Temporal dev server, with every activity registered under its contract name and types and
answering at once, so only orchestration is measured: tables/min, history bytes a table (every
run of the namespace purge's chain, and of any table purge workflow it started), runs, and the
server's and the workers' CPU a table.

    .venv/bin/python -m bench.control_plane --tables 10000 100000 1000000 --workers 1 2 \
        [--window 64] [--batch-tables 32] [--baseline-tables 2000] [--range-tables 50000] \
        [--warmup-tables 2000] [--repeats 3] [--fresh-server] [--runners icepurge sdk]

A purge of more tables than --range-tables runs as a tree (PurgeTableRange children); their
histories count in the bytes a table.

--baseline-tables runs, first, a namespace purge of that many tables with a workflow per table
(`batch_tables` 0, the window the same): the shape every table took before batches were the
default.

--warmup-tables runs, before anything is measured on fresh worker processes, a namespace purge of
that many tables in the measured shape, and prints it as a row of its own: what a new process pays
once (its sandbox's first imports of the workflows' modules, its first polls) would otherwise fall
on the first, shortest purge measured.

--repeats purges each size that many times, in rounds (each round every size, in the order given), so
a drift of the host's pace falls on every size alike; it ends with each size's median tables/min
and the lowest median over the highest: a purge of 10^4 tables lasts about a second, so a quarter
second either way moves one run's figure by a fifth.

--fresh-server starts each round on a new dev server, with a database of its own (and new worker
processes, warmed up again): a server keeps every purge's history, and its CPU a table grew round
after round on one server (0.05 to 0.09 ms at 10^5 over five rounds), so without it a later round
measures a fuller server, not only a later hour.

Each purge's history splits its time in three (bench.purge_ends): the start (from its first run's
start to its first batch or range scheduled), the steady part (to the last one's end) and the
close (to the purge's close). The rows and the medians give the rate over the whole purge, as a
user waits for it, and over the steady part, what a purge of any size keeps while it works; the
run ends with each purge's start and close and the steps that ran in them: what a short purge pays
whatever its size.

Each worker process has as many activity slots as the window, payloads are sealed by the AES-GCM
codec as in service, and the dev server suggests continue-as-new at its default.

--runners runs each round's purges once with each workflow runner, on a dev server and workers of
their own: `icepurge` (the worker's, icepurge.worker.sandbox_runner: the SDK's sandbox with each
snippet compiled once) and `sdk` (the SDK's sandbox as it comes, with the same restrictions), and
ends with each size's median for one over the other's.

A worker process of this bench: `python -m bench.control_plane --serve ADDRESS SLOTS RUNNER`.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psutil
from pydantic import SecretStr
from temporalio import activity
from temporalio.api.history.v1 import HistoryEvent
from temporalio.client import Client
from temporalio.worker import Worker
from temporalio.worker.workflow_sandbox import SandboxedWorkflowRunner

from bench.purge_ends import PurgeEnds, purge_ends
from icepurge.api.clients.temporal_namespace_client import NamespacePurgeClient, namespace_request
from icepurge.connection.connect import connect
from icepurge.connection.exit_now import run_then_exit
from icepurge.connection.settings import TemporalSettings
from icepurge.contract import activity_steps as steps
from icepurge.contract.batch_steps import RangeBatchInput, RangeBatchResult
from icepurge.contract.catalog_steps import LoadedTable
from icepurge.contract.counts import Category, FileCounts, OutcomeCounts
from icepurge.contract.events import DeliveryReport, EventBatch
from icepurge.contract.express_steps import DroppedPlan, FinishInput, FinishResult, LoadAndPlanInput
from icepurge.contract.names import TABLE_RANGE_WORKFLOW_TYPE
from icepurge.contract.namespace_request import DEFAULT_RANGE_TABLES
from icepurge.contract.namespace_status import FileTotals
from icepurge.contract.namespace_steps import (
    DropNamespacesInput,
    DropNamespacesResult,
    EnumerateInput,
    EnumerationSummary,
    TableName,
    TablePage,
    TablePageInput,
)
from icepurge.contract.status import GuardName, GuardOutcome, PlannedTotals
from icepurge.contract.steps import ChunkResult, FinalizeResult, PlanSummary
from icepurge.contract.table_outcomes import TableTallies
from icepurge.devstack.free_ports import free_ports
from icepurge.devstack.ports import StackPorts
from icepurge.devstack.process import ServiceProcess
from icepurge.devstack.temporal_server import temporal_server
from icepurge.worker.purge_workers import PurgeWorkers
from icepurge.worker.sandbox_runner import sandboxed_runner
from icepurge.workflows.namespace.purge_namespace import PurgeNamespaceWorkflow
from icepurge.workflows.namespace.purge_table_range import PurgeTableRangeWorkflow
from icepurge.workflows.table.purge_table import PurgeTableWorkflow

QUEUE = "bench-control-plane"
ICEPURGE_RUNNER = "icepurge"
SDK_RUNNER = "sdk"
CATALOG = "bench"
# Each fake table: one data file, its manifest and manifest list, one metadata file.
FILES_PER_TABLE = 4
# How long each batch holds its activity slot (bench.priority_contention); 0: it answers at once.
BATCH_SECONDS_VARIABLE = "ICEPURGE_BENCH_BATCH_SECONDS"
# A throwaway key: the bench's payloads are sealed as in service, the key dies with the run (its
# worker processes inherit it through the environment).
CODEC_KEY = os.environ.setdefault("ICEPURGE_BENCH_CODEC_KEY", base64.b64encode(os.urandom(32)).decode())


def _settings(address: str) -> TemporalSettings:
    return TemporalSettings(
        temporal_address=address, task_queue=QUEUE, codec_keys={"bench": SecretStr(CODEC_KEY)}
    )


def _name(index: int) -> TableName:
    return TableName(namespace=["ns", f"n{index // 1000:05d}"], table=f"t{index:08d}")


def _tallies(count: int) -> TableTallies:
    files = count * FILES_PER_TABLE
    return TableTallies(done=count, files=FileTotals(planned=files, done=files, deleted=files))


@activity.defn(name=steps.ENUMERATE.name)
async def enumerate_tree(step: EnumerateInput) -> EnumerationSummary:
    tables = int(step.namespace[-1].removeprefix("tables"))
    return EnumerationSummary(
        tree_location=f"memory://{step.purge_id}/{step.run_chain}/tree.json",
        tables_total=tables,
        namespaces_total=tables // 1000 + 1,
        entries_skipped=0,
        skipped_sample=[],
    )


@activity.defn(name=steps.TABLE_PAGE.name)
async def table_page(step: TablePageInput) -> TablePage:
    return TablePage(tables=[_name(index) for index in range(step.offset, step.offset + step.limit)])


@activity.defn(name=steps.PURGE_RANGE_BATCH.name)
async def range_batch(step: RangeBatchInput) -> RangeBatchResult:
    await asyncio.sleep(float(os.environ.get(BATCH_SECONDS_VARIABLE, "0")))
    return RangeBatchResult(tallies=_tallies(step.count))


@activity.defn(name=steps.DROP_NAMESPACES.name)
async def drop_namespaces(step: DropNamespacesInput) -> DropNamespacesResult:
    return DropNamespacesResult(dropped=1, kept_total=0, kept_sample=[])


@activity.defn(name=steps.DELIVER_EVENTS.name)
async def deliver(batch: EventBatch) -> DeliveryReport:
    return DeliveryReport()


def _plan(purge_id: str, table: str) -> PlanSummary:
    return PlanSummary(
        plan_location=f"memory://{purge_id}/plan.json",
        chunk_count=1,
        planned=PlannedTotals(content_files=1, metadata_files=FILES_PER_TABLE - 1),
        gc_enabled=True,
        locations=[f"s3://bench/{table}"],
    )


TABLE_STEPS_ANSWERED: list[Callable[..., Any]] = [
    enumerate_tree,
    table_page,
    range_batch,
    drop_namespaces,
    deliver,
]


def _table_workflow_steps() -> list[Callable[..., Any]]:
    """The express lane of a table purge by name, answered at once: loaded, planned, dropped,
    guarded, deleted and finalized, as a small table's purge is."""
    passed = GuardOutcome(guard=GuardName.PROTECTION, applied=True, passed=True, detail="none")

    @activity.defn(name=steps.LOAD_PLAN_AND_DROP.name)
    async def dropped(step: LoadAndPlanInput) -> DroppedPlan:
        loaded = LoadedTable(
            metadata_location=f"s3://bench/{step.request.table}/metadata/v1.metadata.json",
            file_io_properties={},
            protection=passed,
        )
        return DroppedPlan(loaded=loaded, plan=_plan(step.purge_id, step.request.table), storage_gone=False)

    @activity.defn(name=steps.FINISH_SMALL_PURGE.name)
    async def finish(step: FinishInput) -> FinishResult:
        counts = FileCounts(by_category={Category.DATA_FILES: OutcomeCounts(deleted=1)})
        rest = FileCounts(by_category={Category.METADATA_FILES: OutcomeCounts(deleted=FILES_PER_TABLE - 1)})
        chunk = ChunkResult(
            chunk_index=0, counts=counts, failures_total=0, failure_sample=[], delete_requests=1
        )
        final = FinalizeResult(
            counts=rest, failures_total=0, failure_sample=[], report_location=f"memory://{step.purge_id}"
        )
        guard = GuardOutcome(guard=GuardName.LIVE_TABLE, applied=True, passed=True, detail="none")
        return FinishResult(guard=guard, chunks=[chunk], finalize=final)

    return [dropped, finish]


def _runner(name: str) -> SandboxedWorkflowRunner:
    """The worker's own sandbox, or the SDK's with the same restrictions."""
    runner = sandboxed_runner()
    return runner if name == ICEPURGE_RUNNER else SandboxedWorkflowRunner(restrictions=runner.restrictions)


async def _serve(address: str, slots: int, runner: str) -> None:
    client = await connect(_settings(address))

    def build(task_queue: str, queue_slots: int) -> Worker:
        return Worker(
            client,
            task_queue=task_queue,
            workflows=[PurgeNamespaceWorkflow, PurgeTableRangeWorkflow, PurgeTableWorkflow],
            activities=[*TABLE_STEPS_ANSWERED, *_table_workflow_steps()],
            max_concurrent_activities=queue_slots,
            workflow_runner=_runner(runner),
        )

    # As icepurge's worker: the task queue and its bulk queue, each with `slots`.
    await PurgeWorkers(build, QUEUE, slots, slots).run()


@dataclass
class Measured:
    label: str
    tables: int
    seconds: float
    history_bytes: int
    events: int
    runs: int
    workflows: int
    server_cpu: float
    worker_cpu: float
    ends: PurgeEnds

    @property
    def rate(self) -> float:
        return self.tables / self.seconds * 60

    @property
    def steady_rate(self) -> float:
        return self.tables / self.ends.between * 60

    @property
    def cpu_share(self) -> float:
        """The workers' CPU over the server's: the host's pace moves both alike."""
        return self.worker_cpu / self.server_cpu

    def line(self) -> str:
        per = max(self.tables, 1)
        return (
            f"| {self.label} | {self.tables:,} | {self.rate:,.0f} | {self.steady_rate:,.0f} | "
            f"{self.history_bytes / per:,.1f} | {self.runs} | {self.workflows - 1:,} | "
            f"{self.server_cpu / per * 1000:.3f} | {self.worker_cpu / per * 1000:.3f} | {self.seconds:.1f} |"
        )


HEADER = (
    "| configuration | tables | tables/min | tables/min, steady part | history bytes a table | "
    "runs of the namespace purge | child workflows (tables, ranges) | server CPU ms a table | "
    "workers' CPU ms a table | seconds |\n"
    "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
)


async def _runs(client: Client, workflow_id: str) -> list[list[HistoryEvent]]:
    """Each run's history in the workflow's chain, the first run first."""
    found = [run async for run in client.list_workflows(f"WorkflowId = '{workflow_id}'")]
    found.sort(key=lambda run: run.start_time)
    return [
        list((await client.get_workflow_handle(workflow_id, run_id=run.run_id).fetch_history()).events)
        for run in found
    ]


def _size(runs: list[list[HistoryEvent]]) -> tuple[int, int]:
    """Bytes and events over the runs."""
    return sum(event.ByteSize() for run in runs for event in run), sum(len(run) for run in runs)


async def _children(client: Client, parent_id: str) -> list[str]:
    """Its table purge workflows, then its ranges (each once, however many runs)."""
    tables = [found.id async for found in client.list_workflows(f"PurgeParent = '{parent_id}'")]
    ranges = {
        found.id
        async for found in client.list_workflows(f"WorkflowType = '{TABLE_RANGE_WORKFLOW_TYPE}'")
        if found.id.startswith(f"{parent_id}/range-")
    }
    return tables + sorted(ranges)


def _cpu(processes: list[psutil.Process]) -> float:
    total = 0.0
    for process in processes:
        for each in [process, *process.children(recursive=True)]:
            times = each.cpu_times()
            total += times.user + times.system
    return total


async def _measure(serving: Serving, label: str, **request: object) -> Measured:
    tables = int(str(request.pop("tables")))
    parsed = namespace_request(
        CATALOG,
        ["ns", f"tables{tables}"],
        requested_by="bench",
        request_id=label,
        **request,  # type: ignore[arg-type]
    )
    client, server, workers = serving.client, serving.server, serving.workers
    purges = NamespacePurgeClient(client, QUEUE)
    server_before, workers_before = _cpu([server]), _cpu(workers)
    started = time.monotonic()
    purge_id = await purges.start(parsed)
    report = await purges.wait(purge_id)
    seconds = time.monotonic() - started
    server_cpu, worker_cpu = _cpu([server]) - server_before, _cpu(workers) - workers_before
    assert report.status.tables_done == tables, report.status
    assert report.status.files.deleted == tables * FILES_PER_TABLE, report.status.files
    runs = await _runs(client, purge_id)
    size, events = _size(runs)
    children = await _children(client, purge_id)
    for child in children:
        child_size, child_events = _size(await _runs(client, child))
        size += child_size
        events += child_events
    return Measured(
        label,
        tables,
        seconds,
        size,
        events,
        len(runs),
        len(children) + 1,
        server_cpu,
        worker_cpu,
        purge_ends(runs[0], runs[-1]),
    )


async def _batched(
    serving: Serving,
    arguments: argparse.Namespace,
    *,
    tables: int,
    shape: str | None = None,
    run: str = "",
) -> Measured:
    """A purge in the measured shape (batches, window and ranges as asked); `run` tells a repeat's
    purge (its label, so its id) from the others."""
    return await _measure(
        serving,
        f"{shape or f'batches of {arguments.batch_tables}'}, {len(serving.workers)} worker process(es){run}",
        tables=tables,
        max_concurrent_tables=arguments.window,
        batch_tables=arguments.batch_tables,
        range_tables=arguments.range_tables,
    )


def _flatness(workers: int, rates: dict[int, list[float]], over: str = "the whole purge") -> str:
    """Each size's median tables/min over its runs, and the lowest median over the highest: the
    target's "flat within 15 %" holds at 0.85 or more."""
    medians = {tables: statistics.median(each) for tables, each in rates.items()}
    listed = ", ".join(f"{tables:,} tables {median:,.0f}" for tables, median in medians.items())
    ratio = min(medians.values()) / max(medians.values())
    runs = max(len(each) for each in rates.values())
    return (
        f"{workers} worker process(es), median tables/min over {over}, {runs} run(s) a size: {listed}; "
        f"lowest / highest {ratio:.2f}"
    )


def _worker_process(
    address: str, slots: int, logs: Path, index: int, runner: str = ICEPURGE_RUNNER
) -> ServiceProcess:
    command = [sys.executable, "-m", "bench.control_plane", "--serve", address, str(slots), runner]
    return ServiceProcess(f"bench-worker-{index}", command, logs / f"worker-{index}.log")


@dataclass
class Serving:
    """A dev server and worker processes, measured."""

    client: Client
    server: psutil.Process
    workers: list[psutil.Process]


@asynccontextmanager
async def _serving(root: Path, processes: int, slots: int, runner: str) -> AsyncIterator[Serving]:
    """A dev server with a database of its own (in a new folder under `root`), and `processes`
    worker processes on it, their workflows on `runner`."""
    folder = Path(tempfile.mkdtemp(prefix="server-", dir=root))
    ports = StackPorts.free()
    server_process = temporal_server(folder, ports, codec_endpoint=f"http://127.0.0.1:{free_ports(1)[0]}")
    server_process.start()
    try:
        server_process.wait_for_port(ports.temporal)
        address = f"127.0.0.1:{ports.temporal}"
        client = await connect(_settings(address))
        workers = [
            _worker_process(address, slots, root / "logs", index, runner) for index in range(processes)
        ]
        for worker in workers:
            worker.start()
        try:
            await asyncio.sleep(2)
            measured = [psutil.Process(worker.pid) for worker in workers]
            yield Serving(client, psutil.Process(server_process.pid), measured)
        finally:
            for worker in workers:
                worker.stop(grace=3)
    finally:
        server_process.stop(grace=5)
        shutil.rmtree(folder, ignore_errors=True)


async def _warm_up(serving: Serving, arguments: argparse.Namespace) -> None:
    if arguments.warmup_tables:
        measured = await _batched(
            serving, arguments, tables=arguments.warmup_tables, shape="warm-up (not a measurement)"
        )
        print(measured.line(), flush=True)


def _compared(workers: int, figures: dict[str, dict[int, list[float]]], of: str) -> str:
    """Each size's median `of` on icepurge's runner over the SDK's."""
    ratios = ", ".join(
        f"{tables:,} tables {statistics.median(each) / statistics.median(figures[SDK_RUNNER][tables]):.2f}"
        for tables, each in figures[ICEPURGE_RUNNER].items()
    )
    return f"{workers} worker process(es), icepurge's runner over the SDK's, medians of {of}: {ratios}"


async def _run(arguments: argparse.Namespace) -> None:
    root = Path(tempfile.mkdtemp(prefix="icepurge-control-plane-"))
    (root / "logs").mkdir()
    runners: list[str] = arguments.runners
    print(
        f"{os.cpu_count()} cores; window {arguments.window} work units, batches of {arguments.batch_tables}, "
        f"ranges of {arguments.range_tables or DEFAULT_RANGE_TABLES:,} tables"
        + ("; each round on a new dev server" if arguments.fresh_server else "")
        + f"; workflow runners: {', '.join(runners)}"
    )
    print(HEADER)
    summaries: list[str] = []
    ends: list[str] = []
    for count in arguments.workers:
        rates: dict[str, dict[int, list[float]]] = {runner: {} for runner in runners}
        steady: dict[str, dict[int, list[float]]] = {runner: {} for runner in runners}
        cpu_shares: dict[str, dict[int, list[float]]] = {runner: {} for runner in runners}
        async with AsyncExitStack() as servers:
            for repeat in range(1, arguments.repeats + 1):
                for runner in runners:
                    if repeat == 1 or arguments.fresh_server or len(runners) > 1:
                        # The last round's server and workers stop before the next round's start.
                        await servers.aclose()
                        serving = await servers.enter_async_context(
                            _serving(root, count, arguments.window, runner)
                        )
                        await _warm_up(serving, arguments)
                    if repeat == 1 and arguments.baseline_tables:
                        measured = await _measure(
                            serving,
                            f"a workflow per table, {count} worker process(es)",
                            tables=arguments.baseline_tables,
                            max_concurrent_tables=arguments.window,
                            batch_tables=0,
                        )
                        print(measured.line(), flush=True)
                    for tables in arguments.tables:
                        run = f", run {repeat} of {arguments.repeats}" if arguments.repeats > 1 else ""
                        on = f", {runner}'s runner" if len(runners) > 1 else ""
                        measured = await _batched(serving, arguments, tables=tables, run=on + run)
                        rates[runner].setdefault(tables, []).append(measured.rate)
                        steady[runner].setdefault(tables, []).append(measured.steady_rate)
                        cpu_shares[runner].setdefault(tables, []).append(measured.cpu_share)
                        print(measured.line(), flush=True)
                        ends.append(f"- {measured.tables:,} tables, {measured.label}: {measured.ends.line()}")
        for runner in runners:
            on = f" ({runner}'s runner)" if len(runners) > 1 else ""
            summaries.append(_flatness(count, rates[runner]) + on)
            summaries.append(_flatness(count, steady[runner], "the steady part") + on)
        if len(runners) > 1:
            summaries.append(_compared(count, rates, "tables/min over the whole purge"))
            summaries.append(_compared(count, steady, "tables/min over the steady part"))
            summaries.append(_compared(count, cpu_shares, "the workers' CPU over the server's"))
    print("\n".join(summaries))
    print("The start (to the first batch or range scheduled) and the close (from the last one's end):")
    print("\n".join(ends))


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--tables", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--window", type=int, default=64)
    parser.add_argument("--batch-tables", type=int, default=32)
    parser.add_argument("--baseline-tables", type=int, default=0)
    parser.add_argument("--warmup-tables", type=int, default=0)
    parser.add_argument(
        "--repeats",
        type=int,
        default=1,
        help="Purges of each size, in rounds of every size (rows and a median).",
    )
    parser.add_argument(
        "--fresh-server",
        action="store_true",
        help="Each round on a new dev server (and worker processes, warmed up again).",
    )
    parser.add_argument(
        "--range-tables", type=int, default=None, help="Tables a range child takes (default: the contract's)."
    )
    parser.add_argument(
        "--runners",
        nargs="+",
        choices=[ICEPURGE_RUNNER, SDK_RUNNER],
        default=[ICEPURGE_RUNNER],
        help="Each round once with each workflow runner, on a server and workers of its own.",
    )
    parser.add_argument("--serve", nargs=3, metavar=("ADDRESS", "SLOTS", "RUNNER"))
    arguments = parser.parse_args()
    if arguments.repeats < 1:
        parser.error("--repeats counts the purges of each size: give 1 or more")
    if len(set(arguments.runners)) < len(arguments.runners):
        parser.error("--runners names each runner once")
    if arguments.serve:
        asyncio.run(_serve(arguments.serve[0], int(arguments.serve[1]), arguments.serve[2]))
        return
    asyncio.run(_run(arguments))


if __name__ == "__main__":
    run_then_exit(main)
