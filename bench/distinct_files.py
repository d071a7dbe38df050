"""Distinct files on a rewrite-heavy table against an append-only one, both engines, in one run
on the same stack: distinct files/s against the raw bulk-delete ceiling for the same number of
distinct keys, and keys sent to the store ÷ distinct files (counted by a loopback proxy in a
second, untimed purge of the restored table).

The rewrite-heavy table is the shape of issue 10: merge-appends over many partitions, row
deletes (copy-on-write), partition deletes, partition overwrites, the oldest snapshots expired.

    .venv/bin/python -m bench.distinct_files --partitions 100 --appends 40
"""

from __future__ import annotations

import argparse
import asyncio
import time
import uuid
from collections import Counter
from dataclasses import dataclass

from pyiceberg.catalog.sql import SqlCatalog
from pyiceberg.table import Table

from bench.bench_stack import bench_stack
from bench.compare_engines import LOCAL_QUEUE, SPARK_QUEUE, start_workers
from bench.purge_throughput import bulk_delete_ceiling
from bench.table_templates import S3Template
from icepurge.api.clients.temporal_client import PurgeClient
from icepurge.connection.connect import connect
from icepurge.connection.exit_now import run_then_exit
from icepurge.devstack.requests import request_for_table
from icepurge.devstack.rewrite_heavy_table import RewriteShape, compared_shapes, rewrite_heavy_table
from icepurge.devstack.s3_proxy import s3_proxy, through_proxy
from icepurge.devstack.stack import EmbeddedStack
from icepurge.stores.s3_client import s3_client


@dataclass
class Row:
    engine: str
    distinct: int
    seconds: float
    keys_sent: int
    most_sent: int
    left: int

    @property
    def rate(self) -> float:
        return self.distinct / self.seconds


async def _purge(
    stack: EmbeddedStack, table: Table, engine: str, properties: dict[str, str], tag: str
) -> float:
    client = PurgeClient(
        await connect(stack.temporal_settings()), SPARK_QUEUE if engine == "spark" else LOCAL_QUEUE
    )
    request = request_for_table(f"bench-{engine}-{tag}", table, properties, "bench", engine=engine)
    started = time.perf_counter()
    report = await client.wait(await client.start(request))
    assert report.status.state.value == "SUCCEEDED", report.status
    return time.perf_counter() - started


def _measure(stack: EmbeddedStack, table: Table, template: S3Template, engine: str) -> Row:
    seconds = asyncio.run(_purge(stack, table, engine, stack.s3_properties, "timed"))
    left = template.remaining()
    template.restore()
    with s3_proxy(stack.ports.s3) as (port, faults):
        asyncio.run(_purge(stack, table, engine, through_proxy(stack.s3_properties, port), "counted"))
        sent = Counter(faults.deleted_keys)
    template.restore()
    # What the purge leaves is what no metadata file ever referenced (merge-append's intermediate
    # manifests): the rate counts the distinct files it deleted.
    return Row(engine, template.objects - left, seconds, sum(sent.values()), max(sent.values()), left)


def run_shape(stack: EmbeddedStack, catalog: SqlCatalog, label: str, shape: RewriteShape) -> None:
    started = time.perf_counter()
    table = rewrite_heavy_table(catalog, ("bench",), f"{label}_{uuid.uuid4().hex[:6]}", shape)
    template = S3Template(s3_client(stack.s3_properties, max_connections=40), table.location())
    print(
        f"\n== {label}: {shape} ==\n{template.objects:,} objects under the table"
        f" (generated in {time.perf_counter() - started:.0f} s)",
        flush=True,
    )
    workers = start_workers(stack, str(template.objects), {LOCAL_QUEUE, SPARK_QUEUE})
    try:
        rows = [_measure(stack, table, template, engine) for engine in ("local", "spark")]
    finally:
        for worker in workers.values():
            worker.stop()
    ceiling = bulk_delete_ceiling(stack, template.objects)
    print(f"raw bulk-delete ceiling for {template.objects:,} keys: {ceiling:,.0f} keys/s")
    for row in rows:
        print(
            f"{row.engine:>5}: {row.rate:,.0f} distinct files/s ({row.seconds:.1f} s)"
            f" = {row.rate / ceiling:.2f}x ceiling;"
            f" keys sent {row.keys_sent:,} for {row.distinct:,} distinct files"
            f" = {row.keys_sent / row.distinct:.2f} per file, most sent {row.most_sent}x;"
            f" {row.left} never-referenced objects left",
            flush=True,
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--partitions", type=int, default=100)
    parser.add_argument("--appends", type=int, default=40)
    args = parser.parse_args()
    with bench_stack("icepurge-bench-") as (_, stack):
        catalog = stack.catalog("bench")
        for label, shape in compared_shapes(args.partitions, args.appends).items():
            run_shape(stack, catalog, label, shape)


if __name__ == "__main__":
    run_then_exit(main)
