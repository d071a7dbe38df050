"""Purge throughput of a synthetic table on SeaweedFS against the store's raw bulk-delete
ceiling, measured in one run on the same embedded stack.

    .venv/bin/python -m bench.purge_throughput [--manifests 40] [--files-per-manifest 500]
"""

from __future__ import annotations

import argparse
import asyncio
import time
import uuid
from concurrent.futures import ThreadPoolExecutor

from bench.bench_stack import bench_stack
from icepurge.connection.exit_now import run_then_exit
from icepurge.devstack.requests import request_for_table
from icepurge.devstack.stack import WAREHOUSE_BUCKET, EmbeddedStack
from icepurge.devstack.synthetic_table import OBJECT_BODY, TableShape, synthetic_table
from icepurge.stores.s3_client import s3_client

CEILING_THREADS = 8
BATCH = 1000


def bulk_delete_ceiling(stack: EmbeddedStack, count: int) -> float:
    """Keys/s of DeleteObjects (1000 keys a request, 8 threads) with no metadata work at all."""
    client = s3_client(stack.s3_properties, max_connections=40)
    prefix = f"ceiling/{uuid.uuid4().hex[:8]}"
    keys = [f"{prefix}/{index:07d}.parquet" for index in range(count)]
    with ThreadPoolExecutor(32) as pool:
        list(
            pool.map(lambda key: client.put_object(Bucket=WAREHOUSE_BUCKET, Key=key, Body=OBJECT_BODY), keys)
        )
    batches = [keys[start : start + BATCH] for start in range(0, count, BATCH)]
    started = time.perf_counter()
    with ThreadPoolExecutor(CEILING_THREADS) as pool:
        list(
            pool.map(
                lambda batch: client.delete_objects(
                    Bucket=WAREHOUSE_BUCKET,
                    Delete={"Objects": [{"Key": key} for key in batch], "Quiet": True},
                ),
                batches,
            )
        )
    return count / (time.perf_counter() - started)


async def icepurge_throughput(stack: EmbeddedStack, manifests: int, files: int) -> tuple[float, int, float]:
    catalog = stack.catalog("bench")
    name = f"t{uuid.uuid4().hex[:8]}"
    table = synthetic_table(
        catalog, ("bench", name), TableShape(manifests=manifests, files_per_manifest=files)
    )
    request = request_for_table("bench", table, stack.s3_properties, "bench")
    client = await stack.purge_client()
    started = time.perf_counter()
    report = await client.wait(await client.start(request))
    elapsed = time.perf_counter() - started
    deleted = report.status.counts.total().deleted
    return deleted / elapsed, deleted, elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--manifests", type=int, default=40)
    parser.add_argument("--files-per-manifest", type=int, default=500)
    args = parser.parse_args()
    total = args.manifests * args.files_per_manifest
    with bench_stack("icepurge-bench-throughput-") as (_, stack):
        worker = stack.worker_process()
        try:
            worker.start()
            ceiling = bulk_delete_ceiling(stack, total)
            rate, deleted, elapsed = asyncio.run(
                icepurge_throughput(stack, args.manifests, args.files_per_manifest)
            )
        finally:
            worker.stop()
    print(f"table: {args.manifests} manifests x {args.files_per_manifest} data files = {total} data files")
    print(
        f"raw bulk-delete ceiling (DeleteObjects x{BATCH}, {CEILING_THREADS} threads): {ceiling:,.0f} keys/s"
    )
    print(f"icepurge end to end (start -> report, {deleted} files incl. metadata): {elapsed:.1f} s")
    print(f"icepurge throughput: {rate:,.0f} files/s = {rate / ceiling:.2f} x ceiling")


if __name__ == "__main__":
    run_then_exit(main)
