"""The front door under load: Locust users (bench/front_door_locustfile.py), each a PyIceberg REST
client pointed at it, create and append to small tables at once, one also a large synthetic
table, then drop every table with purge. Prints the drop latency by table size (p50/p95/p99, as the
clients saw it), the purges completed, and a direct listing of every dropped table's prefix.

    .venv/bin/python -m bench.front_door_load [--users 20] [--tables-per-user 3] [--large-files 50000]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pyiceberg.catalog.rest import RestCatalog

from bench.bench_stack import bench_stack
from bench.cpu_shares import cpu_shares
from bench.drop_anatomy import drop_anatomy
from bench.front_door_stack import CATALOG, door_policy, front_door, serve_catalog
from icepurge.api.clients.temporal_client import PurgeClient
from icepurge.api.server.front_door.drops import TableId
from icepurge.connection.exit_now import run_then_exit
from icepurge.devstack.stack import EmbeddedStack
from icepurge.devstack.synthetic_table import TableShape, synthetic_table
from tests.store import S3Store

LOCUSTFILE = Path(__file__).with_name("front_door_locustfile.py")
BUCKET = "icepurge-load-tables"
QUEUE = "icepurge-front-door-load"


@dataclass(frozen=True)
class LoadRun:
    door_url: str
    token: str
    warehouse: str
    s3: dict[str, str]
    namespace: str
    users: int
    tables_per_user: int
    large_files: int = 0


@dataclass(frozen=True)
class DropStats:
    """`seconds` as the clients measured them; `server_seconds` as the front door did (its
    Server-Timing header): the difference is the clients' own (a Locust process busy writing
    other users' tables answers late)."""

    label: str
    seconds: list[float]
    failures: int
    server_seconds: list[float] = field(default_factory=list)

    def line(self) -> str:
        line = f"drop with purge, {self.label}: {len(self.seconds)} drops, {self.failures} not 204; "
        line += _percentiles(self.seconds)
        if self.server_seconds:
            line += f"; the front door's own time (Server-Timing): {_percentiles(self.server_seconds)}"
        return line


def _percentiles(seconds: list[float]) -> str:
    cuts = statistics.quantiles(seconds, n=100, method="inclusive") if len(seconds) > 1 else seconds * 99
    return (
        f"p50 {cuts[49] * 1000:.0f} ms, p95 {cuts[94] * 1000:.0f} ms, p99 {cuts[98] * 1000:.0f} ms,"
        f" max {max(seconds) * 1000:.0f} ms"
    )


@dataclass(frozen=True)
class LoadOutcome:
    """`tables`, `locations`, `rows`: the drops answered 204."""

    drops: list[DropStats]
    tables: list[TableId]
    locations: list[str]
    rows: list[dict[str, Any]]


async def run_locust(run: LoadRun, folder: Path, large: dict[str, str] | None = None) -> LoadOutcome:
    """The users create, append and drop at once. The large table is made first (or given:
    `large_table`'s name and location)."""
    out = folder / "dropped.jsonl"
    # Once, before the users: SeaweedFS's catalog answers 500 to concurrent creates of one namespace.
    await asyncio.to_thread(lambda: _setup_catalog(run).create_namespace_if_not_exists((run.namespace,)))
    if large is None and run.large_files:
        large = await large_table(run)
    settings = {
        "token": run.token,
        "warehouse": run.warehouse,
        "s3": run.s3,
        "namespace": run.namespace,
        "users": run.users,
        "tables_per_user": run.tables_per_user,
        "large_files": run.large_files,
        "large_table": large,
        "out": str(out),
    }
    await locust_users(run.door_url, "FrontDoorUser", run.users, settings, folder)
    sent = [json.loads(line) for line in out.read_text().splitlines()] if out.exists() else []
    # A drop not answered 204 is counted in its line ("not 204"); only dropped tables are waited
    # for and listed.
    dropped = [row for row in sent if row["status"] == 204]
    return LoadOutcome(
        drops=_drop_stats(sent),
        tables=[TableId(CATALOG, [run.namespace], row["table"]) for row in dropped],
        locations=[row["location"] for row in dropped],
        rows=dropped,
    )


async def locust_users(
    door_url: str,
    user_class: str,
    users: int,
    settings: dict[str, Any],
    folder: Path,
    *,
    spawn_rate: float | None = None,
) -> None:
    """Locust as its own process (it patches the standard library with gevent), its users of
        `user_class` (bench/front_door_locustfile.py) given `settings`; awaited, so that a worker on
        this event loop goes on purging meanwhile. `spawn_rate`: users started a second (all at once
    by default)."""
    locust = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "locust", "-f", str(LOCUSTFILE), "--headless",
        "-u", str(users), "-r", str(spawn_rate or users), "--run-time", "30m",
        "--host", door_url, "--loglevel", "WARNING", user_class,
        env={**os.environ, "ICEPURGE_LOAD": json.dumps(settings)},
        stdout=asyncio.subprocess.DEVNULL,
        stderr=(folder / f"locust-{user_class}.log").open("w"),
    )  # fmt: skip
    await locust.wait()


async def large_table(run: LoadRun) -> dict[str, str]:
    return await asyncio.to_thread(_large_table, run)


def _large_table(run: LoadRun) -> dict[str, str]:
    """The large table, made through the front door before the load: synthetic (many files, no
    data), written by this process rather than by a Locust user (see the locustfile)."""
    catalog = _setup_catalog(run)
    files = run.large_files
    shape = TableShape(manifests=max(files // 500, 1), files_per_manifest=min(files, 500))
    name = f"large{uuid.uuid4().hex[:8]}"
    table = synthetic_table(catalog, (run.namespace, name), shape)
    return {"name": name, "location": table.location()}


def _setup_catalog(run: LoadRun) -> RestCatalog:
    return RestCatalog("load-setup", uri=run.door_url, token=run.token, warehouse=run.warehouse, **run.s3)


def _drop_stats(dropped: list[dict[str, Any]]) -> list[DropStats]:
    labels = sorted({row["label"] for row in dropped})
    return [
        DropStats(
            label=label,
            seconds=[row["seconds"] for row in dropped if row["label"] == label],
            failures=sum(row["status"] != 204 for row in dropped if row["label"] == label),
            server_seconds=[
                row["server_seconds"]
                for row in dropped
                if row["label"] == label and row.get("server_seconds") is not None
            ],
        )
        for label in labels
    ]


async def completed(purges: PurgeClient, tables: list[TableId]) -> int:
    reports = await asyncio.gather(*(purges.wait(table.purge_id()) for table in tables))
    return sum(report.status.state.value == "SUCCEEDED" for report in reports)


async def _bench(stack: EmbeddedStack, folder: Path, args: argparse.Namespace) -> None:
    async with front_door(
        stack,
        QUEUE,
        worker_process=not args.worker_in_process,
        activity_slots=args.activity_slots,
        policy=door_policy(args.hold),
    ) as served:
        run = LoadRun(
            door_url=served.door_url,
            token="insecure-dev",
            warehouse=f"s3://{BUCKET}/",
            s3=stack.s3_properties,
            namespace="load",
            users=args.users,
            tables_per_user=args.tables_per_user,
            large_files=args.large_files,
        )
        large = await large_table(run) if run.large_files else None
        async with cpu_shares() as shares:
            outcome = await run_locust(run, folder, large)
        done = await completed(served.purges, outcome.tables)
        slowest = sorted(outcome.rows, key=lambda row: row["seconds"], reverse=True)[: args.anatomies]
        anatomies = [
            f"{row['seconds']:.2f} s {row['label']}: "
            + await drop_anatomy(
                served.client,
                TableId(CATALOG, [run.namespace], row["table"]).purge_id(),
                datetime.fromtimestamp(row["sent"], UTC).replace(tzinfo=None),
            )
            for row in slowest
        ]
    s3 = S3Store(stack.s3_properties)
    left = sum(len(s3.list(location)) for location in outcome.locations)
    for drop in outcome.drops:
        print(drop.line())
    print(
        f"{args.users} users; purges completed: {done}/{len(outcome.tables)};"
        f" objects left under the dropped tables' prefixes (listed directly): {left}"
    )
    print(shares.line())
    print("the slowest drops, seconds from the DELETE (bench.drop_anatomy):")
    for line in anatomies:
        print(f"  {line}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--users", type=int, default=20)
    parser.add_argument("--tables-per-user", type=int, default=3)
    parser.add_argument("--large-files", type=int, default=50_000)
    parser.add_argument(
        "--worker-in-process",
        action="store_true",
        help="The worker on the API's process (the earlier runs' set-up) instead of its own, as deployed.",
    )
    parser.add_argument("--activity-slots", type=int, default=8, help="The worker's concurrent activities.")
    parser.add_argument(
        "--hold", action="store_true", help="The catalog's hold_namespace set: drops answer at the hold."
    )
    parser.add_argument("--anatomies", type=int, default=5, help="How many of the slowest drops to dissect.")
    args = parser.parse_args()
    with bench_stack("icepurge-front-door-load-") as (_, stack):
        serve_catalog(stack, BUCKET)
        asyncio.run(_bench(stack, Path(tempfile.mkdtemp(prefix="icepurge-load-")), args))


if __name__ == "__main__":
    run_then_exit(main)
