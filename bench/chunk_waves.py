"""Deleting one table's content keys without the workflow around them: the raw DeleteObjects of
the limit (1,000 keys a request, on 4, 8 or 16 threads) against the local engine's own chunk code
(`ChunkJob`, chunks of 5,000 files, 8 requests in flight each), run two chunks at a time as a
purge's default chunk window does, with and without a pause before each chunk for the workflow's
round trip, four at a time, and beside a thread that holds the GIL as planning's decoding does.
Every variant deletes the same keys, in turns, the table restored after each; each round's
seconds are read against that round's raw delete on 8 threads.

Where a purge falls short of the reads+deletes limit (bench.compare_engines), this tells the
worker's CPU a key (this process's CPU over the keys) from the shape of the deletes: each chunk's
requests end together, and the store is left with fewer requests than it needs until the next
chunk starts.

    .venv/bin/python -m bench.chunk_waves --shape append_only --size 20000 --rounds 3 --service-cpus 1
"""

from __future__ import annotations

import argparse
import resource
import statistics
import threading
import time
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

from bench.bench_stack import bench_stack
from bench.bench_stores import S3BenchStore
from bench.compare_engines import SHAPES, table_of
from bench.cpu_pinning import add_service_cpus_option, pin_services_if_asked
from bench.purge_throughput import BATCH
from bench.table_templates import S3Template
from icepurge.activities.delete.chunk_deleter import ChunkJob
from icepurge.activities.delete.object_store import ObjectStore
from icepurge.activities.plan.plan_model import ContentFile
from icepurge.catalogs.locations import LocationGuard
from icepurge.connection.exit_now import run_then_exit
from icepurge.contract.counts import Category
from icepurge.contract.steps import ChunkCheckpoint
from icepurge.devstack.stack import WAREHOUSE_BUCKET
from icepurge.state.state_store import StateStore
from icepurge.stores.outcomes import DeleteTuning
from icepurge.stores.s3_client import s3_client

CHUNK_FILES = 5_000
CONCURRENCY = 8
# A chunk activity's start after the one before it closed: a workflow task and a dispatch.
ROUND_TRIP_SECONDS = 0.06
BASELINE = "raw, 8 threads"
# A chunk's files spread over all its request slots: 8 requests in flight each, not 5.
SPREAD_KEYS = CHUNK_FILES // CONCURRENCY


def _cpu_seconds() -> float:
    used = resource.getrusage(resource.RUSAGE_SELF)
    return used.ru_utime + used.ru_stime


class Deletes:
    def __init__(self, store: S3BenchStore, location: str, keys: list[str]) -> None:
        self._client = s3_client(store.properties, max_connections=40)
        self._properties = store.properties
        self._keys = keys
        self._files = [
            ContentFile(path=f"s3://{WAREHOUSE_BUCKET}/{key}", category=Category.DATA_FILES, size=1)
            for key in keys
        ]
        self._guard = LocationGuard([location], True)
        self._state = StateStore(f"s3://{WAREHOUSE_BUCKET}/chunk-waves-state", store.properties)

    def raw(self, threads: int) -> Callable[[], None]:
        def run() -> None:
            batches = [self._keys[start : start + BATCH] for start in range(0, len(self._keys), BATCH)]
            with ThreadPoolExecutor(threads) as pool:
                list(pool.map(self._delete_objects, batches))

        return run

    def _delete_objects(self, keys: list[str]) -> None:
        objects = [{"Key": key} for key in keys]
        self._client.delete_objects(Bucket=WAREHOUSE_BUCKET, Delete={"Objects": objects, "Quiet": True})  # type: ignore[typeddict-item]

    def chunks(self, window: int, pause: float, request_keys: int = BATCH) -> Callable[[], None]:
        def run() -> None:
            pieces = [
                self._files[start : start + CHUNK_FILES] for start in range(0, len(self._files), CHUNK_FILES)
            ]
            with ThreadPoolExecutor(window) as pool:
                list(pool.map(lambda piece: self._chunk(piece, pause, request_keys), pieces))

        return run

    def _chunk(self, files: list[ContentFile], pause: float, request_keys: int) -> None:
        time.sleep(pause)
        with ObjectStore(self._properties, CONCURRENCY, DeleteTuning(batch_files=request_keys)) as store:
            job = ChunkJob(
                files=files,
                gc_enabled=True,
                outcome_uri=self._state.uri(uuid.uuid4().hex, "outcome.json"),
                store=store,
                state=self._state,
                guard=self._guard,
                dry_run=False,
                heartbeat=lambda _: None,
                concurrency=CONCURRENCY,
                batch_files=request_keys,
            )
            outcome, _ = job.run(ChunkCheckpoint())
        deleted = outcome.checkpoint.counts.total().deleted
        if deleted != len(files):
            raise RuntimeError(f"a chunk deleted {deleted} of {len(files)} files")


class BusyThread:
    """Runs Python without pause beside a variant, as planning decodes beside deletes; `spent` is
    its own CPU, left out of the variant's."""

    def __init__(self) -> None:
        self.spent = 0.0

    def beside(self, run: Callable[[], None]) -> Callable[[], None]:
        return lambda: self._busy(run)

    def _busy(self, run: Callable[[], None]) -> None:
        done = threading.Event()

        def spin() -> None:
            total = 0
            while not done.is_set():
                total += sum(range(10_000))
            self.spent = time.thread_time()

        spinner = threading.Thread(target=spin)
        spinner.start()
        try:
            run()
        finally:
            done.set()
            spinner.join()


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--shape", default="append_only", choices=SHAPES)
    parser.add_argument("--size", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--only", nargs="*", default=[], help="the variants whose names hold one of these (and the baseline)"
    )
    add_service_cpus_option(parser)
    args = parser.parse_args()
    with bench_stack("icepurge-chunk-waves-") as (_, stack):
        pin_services_if_asked(args.service_cpus)
        store = S3BenchStore(stack)
        table, _ = table_of(store, args.shape, args.size)
        template = S3Template(s3_client(store.properties, max_connections=40), table.location())
        deletes = Deletes(store, table.location(), template.kept_keys())
        busy = BusyThread()
        pause_ms = f"{ROUND_TRIP_SECONDS * 1000:.0f}"
        variants = {
            BASELINE: deletes.raw(8),
            "raw, 4 threads": deletes.raw(4),
            "raw, 16 threads": deletes.raw(16),
            "chunks, 2 at a time": deletes.chunks(2, 0.0),
            f"chunks, 2 at a time, {pause_ms} ms before each": deletes.chunks(2, ROUND_TRIP_SECONDS),
            f"chunks, 4 at a time, {pause_ms} ms before each": deletes.chunks(4, ROUND_TRIP_SECONDS),
            f"chunks, 2 at a time, {pause_ms} ms before each, {SPREAD_KEYS} keys a request": deletes.chunks(
                2, ROUND_TRIP_SECONDS, SPREAD_KEYS
            ),
            "chunks, 2 at a time, beside a thread holding the GIL": busy.beside(deletes.chunks(2, 0.0)),
        }
        variants = {
            name: run
            for name, run in variants.items()
            if name == BASELINE or not args.only or any(part in name for part in args.only)
        }
        seconds: dict[str, list[float]] = {name: [] for name in variants}
        ratios: dict[str, list[float]] = {name: [] for name in variants}
        cpu: dict[str, list[float]] = {name: [] for name in variants}
        for _ in range(args.rounds):
            for name, run in variants.items():
                busy.spent = 0.0
                cpu_before, started = _cpu_seconds(), time.perf_counter()
                run()
                seconds[name].append(time.perf_counter() - started)
                cpu[name].append(_cpu_seconds() - cpu_before - busy.spent)
                template.restore()
            for name in variants:
                ratios[name].append(seconds[BASELINE][-1] / seconds[name][-1])
        keys = template.objects
        print(f"{args.shape}, {keys:,} objects, {args.rounds} rounds")
        print(
            f"| variant | seconds, each round | rate against {BASELINE} in its round (median)"
            " | this process's CPU a key (median, µs) |"
        )
        print("| --- | --- | ---: | ---: |")
        for name in variants:
            each = ", ".join(f"{value:.2f}" for value in seconds[name])
            per_key = statistics.median(cpu[name]) / keys * 1e6
            print(f"| {name} | {each} | {statistics.median(ratios[name]):.2f}× | {per_key:.0f} |")


if __name__ == "__main__":
    run_then_exit(main)
