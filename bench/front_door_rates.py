"""Drops alone, at offered rates: small tables made through the front door before each run, then
dropped with purge by Locust users (`DropUser`, bench/front_door_locustfile.py) at a fixed rate,
nothing else running. Prints for each rate the drop latency (p50/p95/p99/max, as the clients saw
it), the rate achieved, the purges completed, the objects left under the dropped tables'
prefixes (listed directly) and the CPU by process: up to which rate of drops this machine holds
the design's p99 < 500 ms. bench.front_door_load is the mixed load (creates, appends, drops).

    .venv/bin/python -m bench.front_door_rates [--rates 1 2 4] [--seconds 20]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import tempfile
import uuid
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path

from pyiceberg.catalog.rest import RestCatalog

from bench.bench_stack import bench_stack
from bench.cpu_shares import cpu_shares
from bench.drop_anatomy import drop_anatomy
from bench.front_door_load import BUCKET, QUEUE, DropStats, completed, locust_users
from bench.front_door_stack import CATALOG, FrontDoor, door_policy, front_door, serve_catalog
from icepurge.api.server.front_door.drops import TableId
from icepurge.connection.exit_now import run_then_exit
from icepurge.devstack.small_tables import create_demo_table
from icepurge.devstack.stack import EmbeddedStack
from tests.store import S3Store

NAMESPACE = "rates"
LABEL = "small table (3 appends)"
TOKEN = "insecure-dev"
# Users per drop a second: a user waits for its answer before its next drop, so each needs
# slack for answers slower than the interval.
USERS_PER_RATE = 3
SLOWEST = 3


def _tables(stack: EmbeddedStack, door_url: str, count: int) -> list[dict[str, str]]:
    catalog = RestCatalog(
        "rates-setup", uri=door_url, token=TOKEN, warehouse=f"s3://{BUCKET}/", **stack.s3_properties
    )
    catalog.create_namespace_if_not_exists((NAMESPACE,))

    def made(_: int) -> dict[str, str]:
        name = f"rate{uuid.uuid4().hex[:10]}"
        return {"name": name, "location": create_demo_table(catalog, (NAMESPACE,), name).location()}

    with ThreadPoolExecutor(4) as pool:
        return list(pool.map(made, range(count)))


async def _one_rate(stack: EmbeddedStack, served: FrontDoor, rate: float, seconds: float) -> list[str]:
    tables = await asyncio.to_thread(_tables, stack, served.door_url, math.ceil(rate * seconds))
    users = max(1, math.ceil(rate * USERS_PER_RATE))
    folder = Path(tempfile.mkdtemp(prefix="icepurge-rates-"))
    out = folder / "dropped.jsonl"
    settings = {
        "token": TOKEN,
        "namespace": NAMESPACE,
        "users": users,
        "tables": tables,
        "per_user_per_second": rate / users,
        "label": LABEL,
        "out": str(out),
    }
    async with cpu_shares() as shares:
        # Started `rate` a second, the users' drops are spread evenly rather than sent in a burst.
        await locust_users(served.door_url, "DropUser", users, settings, folder, spawn_rate=rate)
    sent = [json.loads(line) for line in out.read_text().splitlines()] if out.exists() else []
    span = max(row["sent"] + row["seconds"] for row in sent) - min(row["sent"] for row in sent)
    stats = DropStats(
        LABEL,
        [row["seconds"] for row in sent],
        sum(row["status"] != 204 for row in sent),
        [row["server_seconds"] for row in sent if row.get("server_seconds") is not None],
    )
    rows = [row for row in sent if row["status"] == 204]
    done = await completed(served.purges, [TableId(CATALOG, [NAMESPACE], row["table"]) for row in rows])
    s3 = S3Store(stack.s3_properties)
    left = sum(len(s3.list(row["location"])) for row in rows)
    slowest = sorted(rows, key=lambda row: row["seconds"], reverse=True)[:SLOWEST]
    anatomies = [
        f"    {row['seconds']:.2f} s: "
        + await drop_anatomy(
            served.client,
            TableId(CATALOG, [NAMESPACE], row["table"]).purge_id(),
            datetime.fromtimestamp(row["sent"], UTC).replace(tzinfo=None),
        )
        for row in slowest
    ]
    return [
        f"offered {rate:g} drops/s ({users} users), achieved {len(sent) / span:.2f}/s over {span:.0f} s",
        f"  {stats.line()}",
        f"  purges completed: {done}/{len(rows)} dropped ({len(tables)} tables made);"
        f" objects left under the dropped tables' prefixes: {left}",
        f"  {shares.line()}",
        "  the slowest drops, seconds from the DELETE (bench.drop_anatomy):",
        *anatomies,
    ]


async def _bench(stack: EmbeddedStack, args: argparse.Namespace) -> None:
    async with front_door(
        stack, QUEUE, worker_process=True, workers=args.workers, policy=door_policy(args.hold)
    ) as served:
        for rate in args.rates:
            for line in await _one_rate(stack, served, rate, args.seconds):
                print(line, flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rates", type=float, nargs="+", default=[1.0, 2.0, 4.0])
    parser.add_argument("--seconds", type=float, default=20.0, help="How long each rate is offered.")
    parser.add_argument("--workers", type=int, default=1, help="Worker processes on the task queue.")
    parser.add_argument(
        "--hold", action="store_true", help="The catalog's hold_namespace set: drops answer at the hold."
    )
    args = parser.parse_args()
    with bench_stack("icepurge-front-door-rates-") as (_, stack):
        serve_catalog(stack, BUCKET)
        asyncio.run(_bench(stack, args))


if __name__ == "__main__":
    run_then_exit(main)
