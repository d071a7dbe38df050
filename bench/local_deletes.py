"""Deleting files on the local disk: files/s of icepurge's local deleter (slices of plain
unlinks per pool task) against the FileIO deleter it replaces (one FileIO call per file) and
against two ceilings with no bookkeeping at all: os.unlink mapped over 8 threads one file a
task (bench.compare_engines' disk ceiling) and os.unlink over 8 slices, one a thread (the best
plain Python does here). In one run, on the same disk; each contender gets N fresh files,
deleted in groups of 8,000 as a chunk does.

    .venv/bin/python -m bench.local_deletes --files 500000
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from pyiceberg.io import load_file_io

from icepurge.activities.delete.chunk_deleter import group_size
from icepurge.activities.delete.object_store import ObjectStore
from icepurge.connection.exit_now import run_then_exit
from icepurge.stores.fileio_deletes import FileIODeleter
from icepurge.stores.outcomes import DeleteTuning
from icepurge.stores.rate_budget import BucketRateLimits
from icepurge.stores.store import Deletes

CONCURRENCY = 8
GROUP = group_size(CONCURRENCY, DeleteTuning().batch_files)
BODY = b"x" * 64


def _plant(directory: Path, count: int) -> list[str]:
    directory.mkdir(parents=True)
    paths = [directory / f"part-{index:07d}.parquet" for index in range(count)]
    with ThreadPoolExecutor(32) as pool:
        list(pool.map(lambda path: path.write_bytes(BODY), paths))
    return [path.as_uri() for path in paths]


def _unlink_each(paths: list[str]) -> None:
    for path in paths:
        os.unlink(path)


def _timed(delete: Callable[[list[str]], int], uris: list[str]) -> float:
    started = time.perf_counter()
    deleted = sum(delete(uris[at : at + GROUP]) for at in range(0, len(uris), GROUP))
    seconds = time.perf_counter() - started
    assert deleted == len(uris), (deleted, len(uris))
    return len(uris) / seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--files", type=int, default=500_000)
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="icepurge-bench-disk-"))
    try:
        paths = [uri.removeprefix("file://") for uri in _plant(root / "mapped", args.files)]
        with ThreadPoolExecutor(CONCURRENCY) as pool:
            started = time.perf_counter()
            list(pool.map(os.unlink, paths))
            mapped = args.files / (time.perf_counter() - started)

        paths = [uri.removeprefix("file://") for uri in _plant(root / "sliced", args.files)]
        with ThreadPoolExecutor(CONCURRENCY) as pool:
            started = time.perf_counter()
            size = -(-len(paths) // CONCURRENCY)
            slices = [paths[at : at + size] for at in range(0, len(paths), size)]
            list(pool.map(_unlink_each, slices))
            ceiling = args.files / (time.perf_counter() - started)

        uris = _plant(root / "fileio", args.files)
        with ThreadPoolExecutor(CONCURRENCY) as pool:
            fileio = FileIODeleter(
                load_file_io({}, uris[0]), Deletes(pool, BucketRateLimits(None), DeleteTuning(), CONCURRENCY)
            )
            before = _timed(lambda group: len(fileio.delete(group).deleted), uris)

        uris = _plant(root / "local", args.files)
        with ObjectStore({}, CONCURRENCY, DeleteTuning()) as store:
            after = _timed(lambda group: len(store.delete(group).deleted), uris)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    setting = f"groups of {GROUP:,}, {CONCURRENCY} threads, {os.cpu_count()} cores"
    print(f"{args.files:,} files on the local disk, {setting}")
    print(f"{'deleter':<48} {'files/s':>10} {'ratio to ceiling':>17}")
    for label, rate in (
        ("ceiling: os.unlink over 8 slices", ceiling),
        ("os.unlink mapped on 8 threads (compare_engines)", mapped),
        ("before: FileIODeleter (a FileIO call a file)", before),
        ("now: ObjectStore -> LocalBulkDeleter", after),
    ):
        print(f"{label:<48} {rate:>10,.0f} {rate / ceiling:>16.2f}x")


if __name__ == "__main__":
    run_then_exit(main)
