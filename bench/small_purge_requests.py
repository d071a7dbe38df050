"""How many object-store requests a small table's purge by name makes, by bucket and operation:
the table's own objects (reads and deletes that the purge needs) against the state location's
(plans, chunk outcomes, checkpoints, reports: the purge's bookkeeping). An in-process worker,
botocore's calls and the store layer's obstore requests counted (the latter named "(obstore)");
PyArrow's own S3 reads (PyIceberg's FileIO) are neither and go uncounted.

    .venv/bin/python -m bench.small_purge_requests [--tables 5] [--express/--no-express]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import threading
from collections import Counter
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from typing import Any

from botocore.client import BaseClient

from bench.bench_stack import bench_stack, bench_worker_settings
from icepurge.api.clients.temporal_client import PurgeClient
from icepurge.connection.connect import connect
from icepurge.connection.exit_now import run_then_exit
from icepurge.devstack.catalog_env import pyiceberg_catalog_env
from icepurge.devstack.small_tables import create_demo_table
from icepurge.devstack.stack import STATE_BUCKET, EmbeddedStack
from icepurge.stores.obstore_runtime import nameable
from icepurge.stores.s3_obstore import ObstoreObjects
from icepurge.worker.run import activity_pool, build_worker

CATALOG = "counted"
QUEUE = "icepurge-bench-requests"
NAMESPACE = ("bench", "requests")


def _kind(bucket: object) -> str:
    return "state location" if bucket == STATE_BUCKET else "table objects"


@contextmanager
def counted_requests() -> Iterator[Counter[tuple[str, str]]]:
    """(bucket kind, operation) -> calls, for every botocore call and obstore request made
    meanwhile."""
    counts: Counter[tuple[str, str]] = Counter()
    lock = threading.Lock()
    original = BaseClient._make_api_call  # type: ignore[attr-defined]

    def counting(self: BaseClient, operation: str, params: dict[str, Any]) -> Any:
        with lock:
            counts[(_kind(params.get("Bucket")), operation)] += 1
        return original(self, operation, params)

    BaseClient._make_api_call = counting  # type: ignore[attr-defined]
    with ExitStack() as restore:
        for method, operation in OBSTORE_OPERATIONS.items():
            restore.enter_context(_counting_obstore(method, f"{operation} (obstore)", counts, lock))
        try:
            yield counts
        finally:
            BaseClient._make_api_call = original  # type: ignore[attr-defined]


# ObstoreObjects' methods that send one obstore request, as S3 names the request.
OBSTORE_OPERATIONS = {"get": "GetObject", "put": "PutObject", "head": "HeadObject"}


@contextmanager
def _counting_obstore(
    method: str, operation: str, counts: Counter[tuple[str, str]], lock: threading.Lock
) -> Iterator[None]:
    original = getattr(ObstoreObjects, method)

    def counting(self: ObstoreObjects, bucket: str, key: str, *rest: Any) -> Any:
        # A key obstore can't name goes on to boto3, which counts it itself.
        if nameable(key):
            with lock:
                counts[(_kind(bucket), operation)] += 1
        return original(self, bucket, key, *rest)

    setattr(ObstoreObjects, method, counting)
    try:
        yield
    finally:
        setattr(ObstoreObjects, method, original)


async def _purge_each(stack: EmbeddedStack, tables: int, express: bool) -> Counter[tuple[str, str]]:
    settings = bench_worker_settings(stack, QUEUE)
    client = await connect(settings, warn_plaintext=False)
    purges = PurgeClient(client, QUEUE)
    with activity_pool(settings) as pool:
        async with build_worker(client, settings, pool):
            # A first purge warms the worker's clients (their creation makes no request counted).
            await purges.wait(
                await purges.purge_by_name(CATALOG, list(NAMESPACE), "warm", requested_by="bench")
            )
            with counted_requests() as counts:
                for index in range(tables):
                    purge_id = await purges.purge_by_name(
                        CATALOG,
                        list(NAMESPACE),
                        f"t{index}",
                        requested_by="bench",
                        options={"express_lane": express},
                    )
                    await purges.wait(purge_id)
    return counts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--tables", type=int, default=5)
    parser.add_argument("--express", action=argparse.BooleanOptionalAction, default=True)
    arguments = parser.parse_args()
    with bench_stack("icepurge-bench-requests-") as (_, stack):
        os.environ.update(pyiceberg_catalog_env(CATALOG, stack.catalog_properties(CATALOG)))
        catalog = stack.catalog(CATALOG)
        for name in ["warm", *(f"t{index}" for index in range(arguments.tables))]:
            create_demo_table(catalog, NAMESPACE, name)
        counts = asyncio.run(_purge_each(stack, arguments.tables, arguments.express))
    lane = "express lane" if arguments.express else "step by step"
    print(f"{arguments.tables} small tables (three appends, 13 files) purged by name, one at a time, {lane}")
    print("requests per table, by bucket and operation:")
    for kind in ("table objects", "state location"):
        rows = sorted((op, n) for (k, op), n in counts.items() if k == kind)
        total = sum(n for _, n in rows) / arguments.tables
        listed = ", ".join(f"{op} {n / arguments.tables:g}" for op, n in rows)
        print(f"  {kind}: {total:g} ({listed})")


if __name__ == "__main__":
    run_then_exit(main)
