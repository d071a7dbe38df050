"""Start-request latency of the HTTP API: 50 concurrent clients on loopback, each sending start
requests (a new purge every time), for a 10-file table and a 500,000-file table. Starting a
purge only starts its workflow, so the table's size must not show; the purges go to a task
queue no worker polls, so only the start path is measured.

    .venv/bin/python -m bench.api_latency [--clients 50] [--requests 20]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from pathlib import Path

import httpx
from pyiceberg.catalog.sql import SqlCatalog

from api.settings import ApiSettings
from devstack.api_server import serve_api
from devstack.ports import StackPorts
from devstack.requests import request_for_table
from devstack.stack import EmbeddedStack
from devstack.synthetic_table import TableShape, synthetic_table
from workflows.request import PurgeRequest


async def _client(url: str, base: PurgeRequest, client_index: int, requests: int) -> list[float]:
    seconds = []
    async with httpx.AsyncClient(timeout=60) as http:
        for index in range(requests):
            body = base.model_copy(update={"catalog": f"latency-{client_index}-{index}"}).model_dump(
                mode="json"
            )
            started = time.perf_counter()
            response = await http.post(f"{url}/v1/purges", json=body)
            seconds.append(time.perf_counter() - started)
            response.raise_for_status()
    return seconds


async def measure(url: str, request: PurgeRequest, clients: int, requests: int) -> list[float]:
    # One warm-up start: the API connects to Temporal on first use.
    await _client(url, request.model_copy(update={"table": "warm-up"}), -1, 1)
    runs = await asyncio.gather(*(_client(url, request, index, requests) for index in range(clients)))
    return [second for run in runs for second in run]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--requests", type=int, default=20, help="start requests per client")
    parser.add_argument("--large-files", type=int, default=500_000)
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="icepurge-latency-"))
    stack = EmbeddedStack(state_dir=root / "stack", ports=StackPorts.free())
    stack.start()
    try:
        s3_catalog = stack.catalog("bench")
        small = synthetic_table(
            s3_catalog, ("latency", "small"), TableShape(manifests=1, files_per_manifest=10)
        )
        disk = SqlCatalog("disk", uri=f"sqlite:///{root / 'disk.sqlite'}", warehouse=(root / "disk").as_uri())
        began = time.perf_counter()
        large = synthetic_table(
            disk, ("latency", "large"), TableShape(manifests=args.large_files // 500, files_per_manifest=500)
        )
        print(
            f"large table: {args.large_files:,} data files on local disk"
            f" (made in {time.perf_counter() - began:.0f} s)"
        )
        settings = ApiSettings(
            temporal_address=stack.temporal_address, task_queue="icepurge-latency", api_insecure_dev=True
        )
        with serve_api(settings) as url:
            for name, table, properties in (
                ("10-file table", small, stack.s3_properties),
                (f"{args.large_files:,}-file table", large, {}),
            ):
                request = request_for_table("latency", table, properties, "bench")
                seconds = asyncio.run(measure(url, request, args.clients, args.requests))
                cuts = statistics.quantiles(seconds, n=100)
                print(
                    f"{name}: {len(seconds)} starts from {args.clients} concurrent clients:"
                    f" p50 {cuts[49] * 1000:.1f} ms, p99 {cuts[98] * 1000:.1f} ms,"
                    f" max {max(seconds) * 1000:.1f} ms",
                    flush=True,
                )
    finally:
        stack.stop()


if __name__ == "__main__":
    main()
