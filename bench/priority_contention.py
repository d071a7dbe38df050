"""Single-table purges beside a bulk purge that keeps every activity slot busy: on one task queue
with one priority, on one queue with the bulk purge at a lower priority, and on a bulk queue of
its own (as icepurge starts it): each single purge's start-to-close time, and its parts read from
its history (waiting for a workflow task, waiting for an activity slot, the activities' own run).

The real workflows on the dev server (bench.control_plane's harness): a namespace purge of
--bulk-tables tables in batches of 32, each batch holding its slot for --batch-seconds, a window
of --window units on one worker process of --slots activity slots on each of its two queues (the
task queue and its bulk queue, as icepurge's worker polls them); meanwhile a purge by name a
second (the express lane: two activities that answer at once), --singles of them. "One priority
for all" starts the namespace purge on the singles' queue at the default priority 3, so every
task is first come, first served; "bulk at priority 4" on that queue at priority 4 (singles keep
3), as icepurge did before bulk queues; "a bulk queue of its own" is icepurge's start.

    .venv/bin/python -m bench.priority_contention [--bulk-tables 10000] [--singles 30]
        [--slots 8] [--window 64] [--batch-seconds 2]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from temporalio.api.history.v1 import HistoryEvent
from temporalio.client import Client
from temporalio.common import Priority, WorkflowIDConflictPolicy

from bench.control_plane import BATCH_SECONDS_VARIABLE, CATALOG, QUEUE, _settings, _worker_process
from icepurge.api.clients.temporal_client import PurgeClient
from icepurge.api.clients.temporal_namespace_client import NamespacePurgeClient, namespace_request
from icepurge.connection.connect import connect
from icepurge.connection.exit_now import run_then_exit
from icepurge.contract.activity_steps import DELIVER_EVENTS
from icepurge.contract.names import NAMESPACE_WORKFLOW_TYPE
from icepurge.contract.namespace_request import namespace_purge_id_for
from icepurge.contract.priorities import bulk_priority
from icepurge.devstack.free_ports import free_ports
from icepurge.devstack.ports import StackPorts
from icepurge.devstack.temporal_server import temporal_server

DEFAULT_PRIORITY = Priority(priority_key=3)
SAME_PRIORITY = "one queue, one priority for all"
LOWER_PRIORITY = "one queue, bulk at priority 4"
OWN_QUEUE = "a bulk queue of its own"


@dataclass
class Parts:
    """One single purge's seconds: closed minus started, and its parts."""

    total: float
    task_wait: float
    slot_wait: float
    running: float
    delivery_wait: float


def _seconds(event: HistoryEvent) -> float:
    return event.event_time.ToDatetime().timestamp()


def _parts(events: list[HistoryEvent], total: float) -> Parts:
    """Event delivery's activities apart: they run beside the purge, but its close waits for the
    final event's."""
    scheduled: dict[int, float] = {}
    deliveries: set[int] = set()
    task_wait = slot_wait = running = delivery_wait = 0.0
    for event in events:
        if event.HasField("workflow_task_scheduled_event_attributes"):
            scheduled[event.event_id] = _seconds(event)
        elif event.HasField("workflow_task_started_event_attributes"):
            origin = event.workflow_task_started_event_attributes.scheduled_event_id
            task_wait += _seconds(event) - scheduled[origin]
        elif event.HasField("activity_task_scheduled_event_attributes"):
            scheduled[event.event_id] = _seconds(event)
            if event.activity_task_scheduled_event_attributes.activity_type.name == DELIVER_EVENTS.name:
                deliveries.add(event.event_id)
        elif event.HasField("activity_task_started_event_attributes"):
            origin = event.activity_task_started_event_attributes.scheduled_event_id
            if origin in deliveries:
                delivery_wait += _seconds(event) - scheduled[origin]
                continue
            slot_wait += _seconds(event) - scheduled[origin]
            scheduled[-origin] = _seconds(event)
        elif event.HasField("activity_task_completed_event_attributes"):
            origin = event.activity_task_completed_event_attributes.scheduled_event_id
            if -origin not in scheduled:
                continue
            running += _seconds(event) - scheduled[-origin]
    return Parts(total, task_wait, slot_wait, running, delivery_wait)


async def _bulk(client: Client, tables: int, window: int, placement: str, label: str) -> str:
    request = namespace_request(
        CATALOG,
        ["ns", f"tables{tables}"],
        requested_by="bench",
        request_id=label,
        max_concurrent_tables=window,
    )
    if placement == OWN_QUEUE:
        return await NamespacePurgeClient(client, QUEUE).start(request)
    purge_id = namespace_purge_id_for(request)
    await client.start_workflow(
        NAMESPACE_WORKFLOW_TYPE,
        request.model_dump(mode="json"),
        id=purge_id,
        task_queue=QUEUE,
        id_conflict_policy=WorkflowIDConflictPolicy.USE_EXISTING,
        priority=bulk_priority(CATALOG, None) if placement == LOWER_PRIORITY else DEFAULT_PRIORITY,
    )
    return purge_id


async def _single(purges: PurgeClient, client: Client, label: str, index: int) -> Parts:
    started = time.monotonic()
    purge_id = await purges.purge_by_name(CATALOG, ["single"], f"{label}-{index}", requested_by="bench")
    await purges.wait(purge_id)
    total = time.monotonic() - started
    history = await client.get_workflow_handle(purge_id).fetch_history()
    return _parts(list(history.events), total)


def _percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


def _line(label: str, parts: list[Parts]) -> str:
    def both(values: list[float]) -> str:
        return f"{statistics.median(values):.3f} / {_percentile(values, 0.99):.3f}"

    return (
        f"| {label} | {len(parts)} | {both([part.total for part in parts])} | "
        f"{both([part.task_wait for part in parts])} | {both([part.slot_wait for part in parts])} | "
        f"{both([part.running for part in parts])} | {both([part.delivery_wait for part in parts])} |"
    )


HEADER = (
    "| single purges | n | start to closed, s (p50 / p99) | workflow-task waits | its steps' slot waits | "
    "its steps' run | its events' slot waits |\n| --- | ---: | ---: | ---: | ---: | ---: | ---: |"
)


async def _round(
    client: Client, arguments: argparse.Namespace, label: str, placement: str | None
) -> list[Parts]:
    purges = PurgeClient(client, QUEUE)
    if placement is not None:
        await _bulk(client, arguments.bulk_tables, arguments.window, placement, label)
        # The window fills, the backlog forms.
        await asyncio.sleep(3)
    singles: list[asyncio.Task[Parts]] = []
    for index in range(arguments.singles):
        singles.append(asyncio.ensure_future(_single(purges, client, label, index)))
        await asyncio.sleep(1)
    return list(await asyncio.gather(*singles))


async def _run(arguments: argparse.Namespace) -> None:
    root = Path(tempfile.mkdtemp(prefix="icepurge-contention-"))
    (root / "logs").mkdir()
    ports = StackPorts.free()
    partitions = {
        f"matching.numTaskqueue{kind}Partitions": arguments.partitions for kind in ("Read", "Write")
    }
    server = temporal_server(
        root, ports, codec_endpoint=f"http://127.0.0.1:{free_ports(1)[0]}", dynamic_config=partitions
    )
    server.start()
    server.wait_for_port(ports.temporal)
    address = f"127.0.0.1:{ports.temporal}"
    os.environ[BATCH_SECONDS_VARIABLE] = str(arguments.batch_seconds)
    worker = _worker_process(address, arguments.slots, root / "logs", 0)
    worker.start()
    try:
        client = await connect(_settings(address))
        await asyncio.sleep(2)
        print(
            f"{os.cpu_count()} cores; one worker process of {arguments.slots} activity slots a queue; bulk: "
            f"{arguments.bulk_tables:,} tables in batches of 32, a window of {arguments.window}, each "
            f"batch {arguments.batch_seconds} s; a single purge by name a second"
        )
        print(HEADER)
        print(_line("idle", await _round(client, arguments, "idle", None)), flush=True)
        for placement in (SAME_PRIORITY, LOWER_PRIORITY, OWN_QUEUE):
            parts = await _round(client, arguments, placement.split(",")[0].replace(" ", "-"), placement)
            print(_line(f"under a bulk purge, {placement}", parts), flush=True)
            await _drain(client)
    finally:
        worker.stop(grace=3)
        server.stop(grace=5)


async def _drain(client: Client) -> None:
    """Every earlier bulk purge cancelled, so the next round's starts on an empty queue."""
    async for found in client.list_workflows(
        f"WorkflowType = '{NAMESPACE_WORKFLOW_TYPE}' AND ExecutionStatus = 'Running'"
    ):
        await client.get_workflow_handle(found.id).cancel()
    await asyncio.sleep(10)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--bulk-tables", type=int, default=10_000)
    parser.add_argument("--singles", type=int, default=30)
    parser.add_argument("--slots", type=int, default=8)
    parser.add_argument("--window", type=int, default=64)
    parser.add_argument("--batch-seconds", type=float, default=2.0)
    parser.add_argument(
        "--partitions",
        default="4",
        help="The task queue's read and write partitions (the server's default: 4).",
    )
    asyncio.run(_run(parser.parse_args()))


if __name__ == "__main__":
    run_then_exit(main)
