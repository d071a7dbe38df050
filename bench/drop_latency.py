"""How long a drop with purge takes to answer, by table size, in the front door's ways:
- on a catalog that keeps storage on a plain drop (a SQLite catalog on SeaweedFS; no REST catalog
  that keeps storage runs here): plan first, and drop first (`upstream_keeps_storage`: the answer
  waits for load and drop only);
- on SeaweedFS's REST catalog, which deletes storage on drop: plan first (the answer waits for
  the plan and for the upstream's own drop of every object), and hold (`hold_namespace`: the
  answer waits for a load and a rename; plan and drop follow in the purge).
The front door's own drop path (`drop_with_purge`). Each purge is then waited for and the table's
prefix listed directly.

    .venv/bin/python -m bench.drop_latency [--sizes 10 50000 500000] [--tables 2] [--ways hold]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import time
from dataclasses import dataclass

from pyiceberg.catalog import Catalog
from pyiceberg.catalog.rest import RestCatalog

from bench.bench_stack import bench_stack
from bench.front_door_stack import front_door
from icepurge.api.server.front_door.drops import TableId, drop_with_purge
from icepurge.api.server.front_door.policy import FrontDoorPolicy
from icepurge.connection.exit_now import run_then_exit
from icepurge.devstack.catalog_env import pyiceberg_catalog_env
from icepurge.devstack.stack import EmbeddedStack
from icepurge.devstack.synthetic_table import TableShape, synthetic_table
from tests.store import S3Store

CATALOG = "lake"
REST_CATALOG = "seaweed"
TABLE_BUCKET = "drop-latency"
NAMESPACE = "bench"
HOLD_NAMESPACE = "icepurge_held"
QUEUE = "icepurge-drop-latency"


@dataclass(frozen=True)
class Way:
    catalog: str
    policy: FrontDoorPolicy
    tag: str


WAYS = {
    "plan first": Way(CATALOG, FrontDoorPolicy(drop_wait_seconds=600), "p"),
    "drop first": Way(CATALOG, FrontDoorPolicy(upstream_keeps_storage=True, drop_wait_seconds=600), "d"),
    "REST plan first": Way(REST_CATALOG, FrontDoorPolicy(drop_wait_seconds=600), "rp"),
    "REST hold": Way(
        REST_CATALOG, FrontDoorPolicy(hold_namespace=HOLD_NAMESPACE, drop_wait_seconds=600), "rh"
    ),
}


def _shape(files: int) -> TableShape:
    return TableShape(manifests=max(files // 500, 1), files_per_manifest=min(files, 500))


def _catalogs(stack: EmbeddedStack) -> dict[str, Catalog]:
    rest = stack.rest_catalog_properties(TABLE_BUCKET)
    rest.pop("type")
    catalogs: dict[str, Catalog] = {
        CATALOG: stack.catalog(CATALOG),
        REST_CATALOG: RestCatalog(REST_CATALOG, **rest),
    }
    for catalog in catalogs.values():
        catalog.create_namespace_if_not_exists((NAMESPACE,))
    return catalogs


async def measure(stack: EmbeddedStack, sizes: list[int], tables: int, ways: list[str]) -> None:
    catalogs = _catalogs(stack)
    s3 = S3Store(stack.s3_properties)
    async with front_door(stack, QUEUE) as served:
        for size in sizes:
            for name_of_way in ways:
                way = WAYS[name_of_way]
                answered, finished, left = [], [], 0
                for index in range(tables):
                    name = f"t{size}{way.tag}{index}"
                    table = await asyncio.to_thread(
                        synthetic_table, catalogs[way.catalog], (NAMESPACE, name), _shape(size)
                    )
                    started = time.perf_counter()
                    outcome = await drop_with_purge(
                        served.purges, TableId(way.catalog, [NAMESPACE], name), "bench", way.policy
                    )
                    answered.append(time.perf_counter() - started)
                    assert outcome.dropped, outcome
                    report = await served.purges.wait(outcome.purge_id)
                    finished.append(time.perf_counter() - started)
                    assert report.status.state.value == "SUCCEEDED", report.status
                    left += len(await asyncio.to_thread(s3.list, table.location()))
                print(
                    f"{size:>9,} files, {name_of_way}: drop answered in "
                    + ", ".join(f"{seconds * 1000:.0f} ms" for seconds in answered)
                    + "; purge done in "
                    + ", ".join(f"{seconds:.1f} s" for seconds in finished)
                    + f"; objects left under the prefixes: {left}",
                    flush=True,
                )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", type=int, nargs="+", default=[10, 50_000, 500_000])
    parser.add_argument("--tables", type=int, default=2, help="drops per size and way")
    parser.add_argument("--ways", nargs="+", choices=list(WAYS), default=list(WAYS))
    args = parser.parse_args()
    with bench_stack("icepurge-drop-latency-") as (_, stack):
        stack.create_table_bucket(TABLE_BUCKET)
        os.environ.update(pyiceberg_catalog_env(CATALOG, stack.catalog_properties(CATALOG)))
        os.environ.update(pyiceberg_catalog_env(REST_CATALOG, stack.rest_catalog_properties(TABLE_BUCKET)))
        asyncio.run(measure(stack, args.sizes, args.tables, args.ways))


if __name__ == "__main__":
    run_then_exit(main)
