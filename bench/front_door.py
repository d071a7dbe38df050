"""The Iceberg REST front door against SeaweedFS's REST catalog (SigV4, service mode), on loopback:
the per-call overhead of going through it (PyIceberg's load_table, through the front door and
straight to the upstream, in turns), and the latency of a drop with purge by table size (the
DELETE's answer; then the purge's end and the table's prefix, listed directly).

    .venv/bin/python -m bench.front_door [--calls 200] [--sizes 10 100 1000] [--tables 3]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from urllib.parse import quote

import httpx
from pyiceberg.catalog.rest import RestCatalog

from bench.bench_stack import bench_stack
from bench.front_door_stack import CATALOG, front_door, serve_catalog
from icepurge.api.clients.temporal_client import PurgeClient
from icepurge.api.server.front_door.drops import TableId
from icepurge.connection.exit_now import run_then_exit
from icepurge.devstack.stack import EmbeddedStack
from tests.store import S3Store
from tests.tables import many_files_table

BUCKET = "icepurge-bench-tables"
QUEUE = "icepurge-front-door"
NAMESPACE = "bench"


def _ms(seconds: list[float]) -> str:
    cuts = statistics.quantiles(seconds, n=100, method="inclusive") if len(seconds) > 1 else seconds * 99
    return f"p50 {cuts[49] * 1000:.1f} ms, p99 {cuts[98] * 1000:.1f} ms, max {max(seconds) * 1000:.1f} ms"


def overhead(door: RestCatalog, upstream: RestCatalog, calls: int) -> None:
    many_files_table(upstream, (NAMESPACE,), "probe", manifests=1, files=1)
    seconds: dict[str, list[float]] = {"front door": [], "upstream directly": []}
    for _ in range(calls):
        for label, catalog in (("front door", door), ("upstream directly", upstream)):
            started = time.perf_counter()
            catalog.load_table((NAMESPACE, "probe"))
            seconds[label].append(time.perf_counter() - started)
    for label, taken in seconds.items():
        print(f"load_table, {label}: {calls} calls: {_ms(taken)}", flush=True)
    added = statistics.median(seconds["front door"]) - statistics.median(seconds["upstream directly"])
    print(f"front door adds {added * 1000:.1f} ms per call at the median", flush=True)


async def drops(
    api_url: str, upstream: RestCatalog, purges: PurgeClient, s3: S3Store, *, sizes: list[int], tables: int
) -> None:
    base = f"{api_url}/iceberg/{CATALOG}/v1"
    config = httpx.get(f"{base}/config").json()
    prefix = config.get("overrides", {}).get("prefix") or config.get("defaults", {}).get("prefix")
    if prefix:
        base += f"/{quote(prefix, safe='')}"
    async with httpx.AsyncClient(timeout=120) as http:
        for size in sizes:
            taken, left = [], 0
            for index in range(tables):
                name = f"t{size}x{index}"
                files = max(size // 10, 1)
                table = await asyncio.to_thread(
                    many_files_table, upstream, (NAMESPACE,), name, manifests=min(size, 10), files=files
                )
                started = time.perf_counter()
                answer = await http.delete(
                    f"{base}/namespaces/{NAMESPACE}/tables/{name}", params={"purgeRequested": "true"}
                )
                taken.append(time.perf_counter() - started)
                answer.raise_for_status()
                await purges.wait(TableId(CATALOG, [NAMESPACE], name).purge_id())
                left += len(s3.list(table.location()))
            print(
                f"drop with purge, {size:,}-file tables: {tables} drops: {_ms(taken)};"
                f" purges completed {tables}/{tables}; objects left under their prefixes: {left}",
                flush=True,
            )


async def run(stack: EmbeddedStack, calls: int, sizes: list[int], tables: int) -> None:
    properties = stack.rest_catalog_properties(BUCKET)
    properties.pop("type")
    upstream = RestCatalog(CATALOG, **properties)
    upstream.create_namespace_if_not_exists((NAMESPACE,))
    async with front_door(stack, QUEUE) as served:
        door = RestCatalog("door", uri=served.door_url, warehouse=f"s3://{BUCKET}/", **stack.s3_properties)
        await asyncio.to_thread(overhead, door, upstream, calls)
        s3 = S3Store(stack.s3_properties)
        await drops(served.api_url, upstream, served.purges, s3, sizes=sizes, tables=tables)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--sizes", type=int, nargs="+", default=[10, 100, 1000])
    parser.add_argument("--tables", type=int, default=3, help="drops per size")
    args = parser.parse_args()
    with bench_stack("icepurge-front-door-") as (_, stack):
        serve_catalog(stack, BUCKET)
        asyncio.run(run(stack, args.calls, args.sizes, args.tables))


if __name__ == "__main__":
    run_then_exit(main)
