"""What events cost a purge: the same table purged by workers whose only sink is the log, with
a live signed webhook as well, and with a webhook whose receiver always answers 500 — one
progress event per second, contenders interleaved over several rounds on one stack.

    .venv/bin/python -m bench.event_overhead [--manifests 40] [--files-per-manifest 500] [--rounds 3]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import time
from contextlib import ExitStack
from dataclasses import dataclass

from pyiceberg.table import Table

from bench.bench_stack import bench_stack
from bench.purge_timeline import run_events
from bench.table_templates import S3Template
from icepurge.api.clients.temporal_client import PurgeClient
from icepurge.connection.connect import connect
from icepurge.connection.exit_now import run_then_exit
from icepurge.devstack.process import WORKER_READY, ServiceProcess
from icepurge.devstack.requests import request_for_table
from icepurge.devstack.stack import EmbeddedStack
from icepurge.devstack.synthetic_table import TableShape, synthetic_table
from icepurge.devstack.webhook_receiver import WEBHOOK_SECRET, Received, webhook_receiver
from icepurge.stores.s3_client import s3_client


@dataclass
class Run:
    seconds: float
    files: int
    history_events: int
    undelivered: int


def _worker(stack: EmbeddedStack, name: str, sinks: list[str], url: str | None) -> ServiceProcess:
    webhook = {"ICEPURGE_WEBHOOK_URL": url, "ICEPURGE_WEBHOOK_SECRET": WEBHOOK_SECRET} if url else {}
    # The worker's name is its task queue too.
    return stack.worker_process(
        f"events-{name}",
        ICEPURGE_TASK_QUEUE=f"events-{name}",
        ICEPURGE_EVENT_SINKS=json.dumps(sinks),
        **webhook,
    )


async def _purge(stack: EmbeddedStack, queue: str, table: Table, round_: int) -> Run:
    temporal = await connect(stack.temporal_settings())
    client = PurgeClient(temporal, queue)
    # A catalog name per contender and round: each purge of the restored table gets its own id.
    request = request_for_table(
        f"bench-{queue}-{round_}", table, stack.s3_properties, "bench", progress_event_seconds=1
    )
    started = time.perf_counter()
    purge_id = await client.start(request)
    report = await client.wait(purge_id)
    seconds = time.perf_counter() - started
    events = sum(await run_events(temporal, purge_id))
    return Run(seconds, report.status.counts.total().deleted, events, report.status.events_undelivered)


def _print(runs: dict[str, list[Run]], receivers: dict[str, Received]) -> None:
    baseline = statistics.median(run.seconds for run in runs["log"])
    header = ("median s", 10), ("files/s", 10), ("vs log", 8), ("history", 9), ("undelivered", 12)
    print(f"{'sinks':<24}" + "".join(f"{title:>{width}}" for title, width in header) + f"{'POSTs':>7}")
    for name, measured in runs.items():
        seconds = statistics.median(run.seconds for run in measured)
        files = measured[0].files
        posts = receivers[name].attempts if name in receivers else 0
        print(
            f"{name:<24}{seconds:>10.2f}{files / seconds:>10,.0f}{seconds / baseline:>7.2f}x"
            f"{statistics.median(run.history_events for run in measured):>9.0f}"
            f"{sum(run.undelivered for run in measured):>12}{posts:>7}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--manifests", type=int, default=40)
    parser.add_argument("--files-per-manifest", type=int, default=500)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    with ExitStack() as cleanup:
        _, stack = cleanup.enter_context(bench_stack("icepurge-bench-events-"))
        live_url, live = cleanup.enter_context(webhook_receiver())
        dead_url, dead = cleanup.enter_context(webhook_receiver(fail_with=500))
        workers = {
            "log": _worker(stack, "log", ["log"], None),
            "log + webhook": _worker(stack, "webhook", ["log", "webhook"], live_url),
            "log + dead webhook": _worker(stack, "dead", ["log", "webhook"], dead_url),
        }
        for worker in workers.values():
            worker.start()
            cleanup.callback(worker.stop)
        for worker in workers.values():
            worker.wait_for_log(WORKER_READY)
        shape = TableShape(manifests=args.manifests, files_per_manifest=args.files_per_manifest)
        table = synthetic_table(stack.catalog("bench"), ("bench", "events"), shape)
        template = S3Template(s3_client(stack.s3_properties, max_connections=40), table.location())
        runs: dict[str, list[Run]] = {name: [] for name in workers}
        for round_ in range(args.rounds):
            for name, worker in workers.items():
                runs[name].append(asyncio.run(_purge(stack, worker.name, table, round_)))
                template.restore()
        objects = f"{shape.content_files:,} content files, {template.objects:,} objects"
        print(f"table: {objects}; {args.rounds} rounds, progress events every second")
        _print(runs, {"log + webhook": live, "log + dead webhook": dead})


if __name__ == "__main__":
    run_then_exit(main)
