"""How long a drop with purge takes to answer, by table size, in the front door's two orders: plan
first (an upstream that deletes storage on drop: the answer waits for the plan) and drop first
(`upstream_keeps_storage`: the answer waits for load and drop only). The front door's own drop
path (`drop_with_purge`) against a catalog that keeps storage on a plain drop, a SQLite catalog
on SeaweedFS; no REST catalog that keeps storage runs on these machines. Each purge is then
waited for and the table's prefix listed directly.

    .venv/bin/python -m bench.drop_latency [--sizes 10 50000 500000] [--tables 2] [--orders "drop first"]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import time

from bench.bench_stack import bench_stack
from bench.front_door_stack import front_door
from icepurge.api.server.front_door.drops import TableId, drop_with_purge
from icepurge.api.server.front_door.policy import FrontDoorPolicy
from icepurge.devstack.catalog_env import pyiceberg_catalog_env
from icepurge.devstack.stack import EmbeddedStack
from icepurge.devstack.synthetic_table import TableShape, synthetic_table
from tests.store import S3Store

CATALOG = "lake"
NAMESPACE = "bench"
QUEUE = "icepurge-drop-latency"
ORDERS = {"plan first": False, "drop first": True}


def _shape(files: int) -> TableShape:
    return TableShape(manifests=max(files // 500, 1), files_per_manifest=min(files, 500))


async def measure(stack: EmbeddedStack, sizes: list[int], tables: int, orders: list[str]) -> None:
    catalog = stack.catalog(CATALOG)
    catalog.create_namespace_if_not_exists((NAMESPACE,))
    s3 = S3Store(stack.s3_properties)
    async with front_door(stack, QUEUE) as served:
        for size in sizes:
            for order in orders:
                keeps_storage = ORDERS[order]
                answered, finished, left = [], [], 0
                for index in range(tables):
                    name = f"t{size}{'d' if keeps_storage else 'p'}{index}"
                    table = await asyncio.to_thread(synthetic_table, catalog, (NAMESPACE, name), _shape(size))
                    policy = FrontDoorPolicy(upstream_keeps_storage=keeps_storage, drop_wait_seconds=600)
                    started = time.perf_counter()
                    outcome = await drop_with_purge(
                        served.purges, TableId(CATALOG, [NAMESPACE], name), "bench", policy
                    )
                    answered.append(time.perf_counter() - started)
                    assert outcome.dropped, outcome
                    await served.purges.wait(outcome.purge_id)
                    finished.append(time.perf_counter() - started)
                    left += len(await asyncio.to_thread(s3.list, table.location()))
                print(
                    f"{size:>9,} files, {order}: drop answered in "
                    + ", ".join(f"{seconds * 1000:.0f} ms" for seconds in answered)
                    + "; purge done in "
                    + ", ".join(f"{seconds:.1f} s" for seconds in finished)
                    + f"; objects left under the prefixes: {left}",
                    flush=True,
                )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", type=int, nargs="+", default=[10, 50_000, 500_000])
    parser.add_argument("--tables", type=int, default=2, help="drops per size and order")
    parser.add_argument("--orders", nargs="+", choices=list(ORDERS), default=list(ORDERS))
    args = parser.parse_args()
    with bench_stack("icepurge-drop-latency-") as (_, stack):
        os.environ.update(pyiceberg_catalog_env(CATALOG, stack.catalog_properties(CATALOG)))
        asyncio.run(measure(stack, args.sizes, args.tables, args.orders))


if __name__ == "__main__":
    main()
