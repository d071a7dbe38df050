"""A gs:// table's purge through the native GCS store against the FileIO path it replaced, in one
run, on the same table: fake-gcs-server (`make engines`), a synthetic append-only table of ~6k
objects restored before each purge, a worker in this process.

- native: icepurge.stores.gcs (obstore reads, JSON API batch deletes of 100, listings);
- FileIO: the registry's GCS entry pointed back at icepurge.stores.fileio, as every gs:// table
  went before (PyArrow's GCS file system, one request a file, on the same delete pool);
- the ceiling: the store's own batch deletes of every object, 8 threads, no metadata work at all
  (what the emulator allows).

Contenders alternate, `--repeat` purges each; the median is shown. Rates count distinct objects.

    .venv/bin/python -m bench.gcs_purge --files 6000 --repeat 3
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, replace

from pyiceberg.catalog.sql import SqlCatalog
from pyiceberg.table import Table

from bench.bench_stack import bench_stack, bench_worker_settings
from icepurge.api.clients.temporal_client import PurgeClient
from icepurge.connection.connect import connect
from icepurge.connection.exit_now import run_then_exit
from icepurge.contract.schemes import STORE_REGISTRY, StoreKind
from icepurge.devstack.fake_gcs import FakeGcsEndpoint, create_buckets, fake_gcs_server
from icepurge.devstack.free_ports import free_ports
from icepurge.devstack.requests import request_for_table
from icepurge.devstack.stack import EmbeddedStack
from icepurge.devstack.synthetic_table import TableShape, synthetic_table
from icepurge.stores.gcs import GcsStore
from icepurge.stores.gcs_deletes import GCS_BATCH, GcsBatchDeleter
from icepurge.stores.outcomes import DeleteTuning
from icepurge.stores.rate_budget import BucketRateLimits
from icepurge.stores.store import Deletes, StoreContext
from icepurge.worker.run import activity_pool, build_worker

BUCKET = "bench"
FILES_PER_MANIFEST, SNAPSHOTS, DELETE_FILES_PER_SNAPSHOT = 500, 10, 10
RESTORE_THREADS = 32
CEILING_THREADS = 8


@dataclass(frozen=True)
class Measured:
    seconds: float
    delete_requests: int
    left: int


class GcsTemplate:
    """Every object under the table's location, kept in memory (tiny synthetic objects)."""

    def __init__(self, store: GcsStore, location: str, properties: dict[str, str]) -> None:
        self._store = store
        self._store_properties = properties
        self._location = location
        uris = self._uris()
        with ThreadPoolExecutor(RESTORE_THREADS) as pool:
            self._objects = dict(zip(uris, pool.map(store.read, uris), strict=True))

    def _uris(self) -> list[str]:
        uris: list[str] = []
        token: str | None = None
        while True:
            page = self._store.list_page(self._location, token, 1000, flat=False)
            uris += [item.uri for item in page.objects]
            token = page.next_token
            if token is None:
                return uris

    @property
    def objects(self) -> int:
        return len(self._objects)

    def restore(self) -> None:
        with ThreadPoolExecutor(RESTORE_THREADS) as pool:
            list(pool.map(lambda item: self._store.write(*item), self._objects.items()))

    def remaining(self) -> int:
        return len(self._uris())

    def ceiling(self) -> float:
        """Seconds to delete every object with the store's batches, 8 threads, nothing else."""
        uris = list(self._objects)
        with ThreadPoolExecutor(CEILING_THREADS) as pool:
            limits = BucketRateLimits(None)
            deletes = Deletes(pool, limits, DeleteTuning(), concurrency=CEILING_THREADS)
            started = time.perf_counter()
            outcome = GcsBatchDeleter(self._store_properties, deletes).delete(uris)
            seconds = time.perf_counter() - started
            limits.close()
        assert len(outcome.deleted) == len(uris), outcome.failed[:3]
        return seconds


@contextmanager
def through_fileio(fileio: bool) -> Iterator[None]:
    """gs:// tables on the FileIO store, as before the GCS store, while `fileio` holds."""
    native = STORE_REGISTRY[StoreKind.GCS]
    if fileio:
        STORE_REGISTRY[StoreKind.GCS] = replace(
            native, implementation="icepurge.stores.fileio:FileIOStore", opened_with_uri=True
        )
    try:
        yield
    finally:
        STORE_REGISTRY[StoreKind.GCS] = native


async def purge_once(
    stack: EmbeddedStack, table: Table, properties: dict[str, str], fileio: bool, attempt: int
) -> tuple[float, int]:
    """The purge's seconds and the delete requests it sent."""
    queue = f"bench-gcs-{'fileio' if fileio else 'native'}"
    # The bench's catalogs are named per purge, none configured: each hands over its snapshot.
    settings = bench_worker_settings(stack, queue).model_copy(update={"snapshot_only_catalogs": ["*"]})
    client = await connect(settings, warn_plaintext=False)
    purges = PurgeClient(client, queue)
    request = request_for_table(
        f"bench-gcs-{queue}-{attempt}", table, properties, "bench", history_sweep=False
    )
    with through_fileio(fileio), activity_pool(settings) as pool:
        async with build_worker(client, settings, pool):
            started = time.perf_counter()
            report = await purges.wait(await purges.start(request))
            seconds = time.perf_counter() - started
    status = report.status
    assert status.state.value == "SUCCEEDED", status.last_error
    return seconds, status.delete_requests


def seeded_table(endpoint: FakeGcsEndpoint, root_catalog: str, files: int) -> Table:
    catalog = SqlCatalog(
        "bench-gcs",
        uri=root_catalog,
        warehouse=endpoint.location(BUCKET, "warehouse"),
        **endpoint.properties(),
    )
    manifests = max(1, -(-(files - SNAPSHOTS * DELETE_FILES_PER_SNAPSHOT) // FILES_PER_MANIFEST))
    shape = TableShape(manifests, FILES_PER_MANIFEST, SNAPSHOTS, DELETE_FILES_PER_SNAPSHOT)
    return synthetic_table(catalog, ("bench", f"append_only_{files}"), shape)


async def run(files: int, repeat: int) -> None:
    with bench_stack("icepurge-bench-gcs-") as (root, stack):
        endpoint = FakeGcsEndpoint(free_ports(1)[0])
        server = fake_gcs_server(root, endpoint.port)
        server.start()
        try:
            server.wait_for_port(endpoint.port)
            create_buckets(endpoint, [BUCKET])
            started = time.perf_counter()
            table = seeded_table(endpoint, f"sqlite:///{root / 'gcs-catalog.sqlite'}", files)
            properties = endpoint.properties()
            store = GcsStore(StoreContext(properties, connections=RESTORE_THREADS))
            template = GcsTemplate(store, table.location(), properties)
            print(
                f"<!-- fake-gcs-server, append_only, {template.objects:,} objects: generated and kept in "
                f"{time.perf_counter() - started:.0f} s -->",
                flush=True,
            )
            runs: dict[bool, list[Measured]] = {False: [], True: []}
            ceilings: list[float] = []
            for attempt in range(repeat):
                template.restore()
                ceilings.append(template.ceiling())
                for fileio in (False, True) if attempt % 2 == 0 else (True, False):
                    template.restore()
                    seconds, requests = await purge_once(stack, table, properties, fileio, attempt)
                    runs[fileio].append(Measured(seconds, requests, template.remaining()))
            _print(template.objects, runs, ceilings)
        finally:
            server.stop()


def _print(objects: int, runs: dict[bool, list[Measured]], ceilings: list[float]) -> None:
    print(
        "| path | distinct objects/s (median) | seconds (each run) | delete requests | vs FileIO "
        "| vs ceiling | left |\n| --- | ---: | --- | ---: | ---: | ---: | ---: |"
    )
    fileio_rate = objects / statistics.median(m.seconds for m in runs[True])
    ceiling_rate = objects / statistics.median(ceilings)
    each = ", ".join(f"{seconds:.2f}" for seconds in ceilings)
    print(
        f"| ceiling: batch deletes only, {CEILING_THREADS} threads | {ceiling_rate:,.0f} | {each} "
        f"| {-(-objects // GCS_BATCH):,} | {ceiling_rate / fileio_rate:.2f}× | 1.00× | 0 |"
    )
    for fileio, name in ((True, "FileIO (PyArrow GCS, a request a file)"), (False, "native GCS store")):
        measured = runs[fileio]
        rate = objects / statistics.median(m.seconds for m in measured)
        seconds = ", ".join(f"{m.seconds:.2f}" for m in measured)
        print(
            f"| {name} | {rate:,.0f} | {seconds} | {measured[0].delete_requests:,} "
            f"| {rate / fileio_rate:.2f}× | {rate / ceiling_rate:.2f}× | {max(m.left for m in measured)} |"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--files", type=int, default=6_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    asyncio.run(run(args.files, args.repeat))


if __name__ == "__main__":
    run_then_exit(main)
