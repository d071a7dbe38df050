"""Start-request latency of the HTTP API: 50 concurrent clients on loopback, each sending start
requests (a new purge every time), for a 10-file table and a 500,000-file table. Starting a
purge only starts its workflow, so the table's size must not show; the purges go to a task
queue no worker polls, so only the start path is measured. The API runs as its own process
(`icepurge api`); the same starts sent straight to Temporal (api.client.PurgeClient) are the
baseline: what the dev server itself takes.

    .venv/bin/python -m bench.api_latency [--clients 50] [--requests 20]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from collections.abc import Awaitable, Callable

import httpx
from pyiceberg.catalog.sql import SqlCatalog

from bench.bench_stack import bench_stack
from icepurge.api.clients.temporal_client import PurgeClient
from icepurge.connection.connect import connect
from icepurge.connection.exit_now import run_then_exit
from icepurge.connection.settings import TemporalSettings
from icepurge.contract.request import PurgeRequest
from icepurge.devstack.requests import request_for_table
from icepurge.devstack.synthetic_table import TableShape, synthetic_table

QUEUE = "icepurge-latency"


Start = Callable[[PurgeRequest], Awaitable[object]]


async def _client(start: Start, base: PurgeRequest, name: str, requests: int) -> list[float]:
    seconds = []
    for index in range(requests):
        request = base.model_copy(update={"catalog": f"{name}-{index}"})
        started = time.perf_counter()
        await start(request)
        seconds.append(time.perf_counter() - started)
    return seconds


async def measure(
    start: Start, request: PurgeRequest, label: str, clients: int, requests: int
) -> list[float]:
    # One warm-up start first: the API connects to Temporal on first use.
    await _client(start, request.model_copy(update={"table": "warm-up"}), f"{label}-warm-up", 1)
    runs = await asyncio.gather(
        *(_client(start, request, f"{label}-{index}", requests) for index in range(clients))
    )
    return [second for run in runs for second in run]


async def compare(
    api_url: str, temporal: TemporalSettings, request: PurgeRequest, clients: int, requests: int
) -> dict[str, list[float]]:
    async with httpx.AsyncClient(timeout=60, limits=httpx.Limits(max_connections=clients)) as http:

        async def over_http(body: PurgeRequest) -> object:
            response = await http.post(f"{api_url}/v1/purges", json=body.model_dump(mode="json"))
            response.raise_for_status()
            return response

        direct = PurgeClient(await connect(temporal), QUEUE)
        label = request.table
        return {
            "HTTP API": await measure(over_http, request, f"http-{label}", clients, requests),
            "Temporal directly": await measure(direct.start, request, f"direct-{label}", clients, requests),
        }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--requests", type=int, default=20, help="start requests per client")
    parser.add_argument("--large-files", type=int, default=500_000)
    args = parser.parse_args()
    with bench_stack("icepurge-latency-") as (root, stack):
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
        api = stack.api_process(ICEPURGE_API_INSECURE_DEV="true", ICEPURGE_TASK_QUEUE=QUEUE)
        api.start()
        try:
            api.wait_for_port(stack.ports.api)
            url = f"http://127.0.0.1:{stack.ports.api}"
            for name, table, properties in (
                ("10-file table", small, stack.s3_properties),
                (f"{args.large_files:,}-file table", large, {}),
            ):
                request = request_for_table("latency", table, properties, "bench")
                results = asyncio.run(
                    compare(url, stack.temporal_settings(), request, args.clients, args.requests)
                )
                for path, seconds in results.items():
                    cuts = statistics.quantiles(seconds, n=100)
                    print(
                        f"{name}, {path}: {len(seconds)} starts from {args.clients} concurrent clients:"
                        f" p50 {cuts[49] * 1000:.1f} ms, p99 {cuts[98] * 1000:.1f} ms,"
                        f" max {max(seconds) * 1000:.1f} ms",
                        flush=True,
                    )
        finally:
            api.stop()


if __name__ == "__main__":
    run_then_exit(main)
