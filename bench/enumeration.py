"""A namespace purge's enumeration and table list at scale: the real enumerate activity walking a
real SQLite catalog of N tables (catalog rows written straight into PyIceberg's SQL schema: the
walk lists, it never loads a table), its list written to a local state location in pages, then
read back by the batches' reader at random offsets. Each size is seeded by this process and
measured in a process of its own, so its peak RSS is the walk's and the reads', not the seeding's.

    .venv/bin/python -m bench.enumeration --tables 100000 1000000 [--per-namespace 1000]

For each size, in the same run: the paged list (today's) and one object holding every name (the
list as it was written before pages, rebuilt here from the same walk): walk seconds, the most RSS
the walk added (sampled), objects written and the largest, the reader's latency for 100 reads of
32 names at random offsets from a cold cache and the RSS those reads added; then the one object's
size, the RSS that holding every name, writing them as one object and reading it once added, and
that read's latency.

One seeded size in this process: `python -m bench.enumeration --one FOLDER N`.
"""

from __future__ import annotations

import argparse
import json
import random
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import psutil
from pyiceberg.catalog.sql import SqlCatalog
from temporalio.testing import ActivityEnvironment

from icepurge.activities.namespace.namespace_activities import NamespaceActivities
from icepurge.activities.namespace.table_lists import NamespaceTree, TableLists
from icepurge.catalogs.configured import CatalogRegistry
from icepurge.connection.exit_now import run_then_exit
from icepurge.contract.namespace_steps import EnumerateInput
from icepurge.state.state_store import StateStore

CATALOG = "bench"
ROOT = "enum"
READS = 100
READ_NAMES = 32


class PeakRss:
    """The most RSS above the start, sampled every 10 ms (the process's lifetime peak, ru_maxrss,
    is its imports')."""

    def __init__(self) -> None:
        self._process = psutil.Process()
        self._start = self._process.memory_info().rss
        self._peak = self._start
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def _sample(self) -> None:
        while not self._stop.wait(0.01):
            self._peak = max(self._peak, self._process.memory_info().rss)

    def __enter__(self) -> PeakRss:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join()

    @property
    def mib(self) -> float:
        return (self._peak - self._start) / 2**20


def _properties(folder: Path) -> dict[str, str]:
    return {"uri": f"sqlite:///{folder}/catalog.db", "warehouse": f"file://{folder}/warehouse"}


def _seed(folder: Path, tables: int, per_namespace: int) -> None:
    catalog = SqlCatalog(CATALOG, **_properties(folder))
    catalog.create_namespace((ROOT,))
    rows = [
        (
            CATALOG,
            f"{ROOT}.n{index // per_namespace:05d}",
            f"t{index:08d}",
            f"file://{folder}/m/{index}.json",
            None,
            "TABLE",
        )
        for index in range(tables)
    ]
    with sqlite3.connect(folder / "catalog.db") as db:
        db.executemany("INSERT INTO iceberg_tables VALUES (?, ?, ?, ?, ?, ?)", rows)


def _objects(folder: Path) -> tuple[int, int]:
    sizes = [path.stat().st_size for path in folder.rglob("*.json")]
    return len(sizes), max(sizes, default=0)


def one(folder: Path, tables: int) -> dict[str, float]:
    registry = CatalogRegistry({CATALOG: {"type": "sql", **_properties(folder)}})
    registry.catalog(CATALOG).list_namespaces()
    state = StateStore(f"file://{folder}/state", {})
    activities = NamespaceActivities(registry, state, TableLists(state))
    step = EnumerateInput(purge_id="p", catalog=CATALOG, namespace=[ROOT], nested=True, run_chain="paged")
    with PeakRss() as walk_rss:
        began = time.perf_counter()
        summary = ActivityEnvironment().run(activities.enumerate_namespace, step)
        walk = time.perf_counter() - began
    assert summary.tables_total == tables, summary
    objects, largest = _objects(folder / "state")
    generator = random.Random(tables)
    latencies = []
    with PeakRss() as read_rss:
        lists = TableLists(state)
        for _ in range(READS):
            offset = generator.randrange(tables)
            began = time.perf_counter()
            # A reader that kept nothing: the index and the page are read afresh.
            lists = TableLists(state)
            lists.names(summary.tree_location, offset, READ_NAMES)
            latencies.append(time.perf_counter() - began)
    latencies.sort()
    with PeakRss() as legacy_rss:
        # Every name held at once, written as one object (as enumeration did before pages), and
        # one read of it.
        every = lists.names(summary.tree_location, 0, tables)
        legacy = state.uri("legacy", "tree.json")
        state.write(legacy, NamespaceTree(tables=every, namespaces=[], skipped=[]), compress=True)
        del every
        began = time.perf_counter()
        TableLists(state).names(legacy, tables // 2, READ_NAMES)
        legacy_read = time.perf_counter() - began
    return {
        "tables": tables,
        "walk_seconds": walk,
        "walk_peak_mib": walk_rss.mib,
        "read_peak_mib": read_rss.mib,
        "objects": objects,
        "largest_object_bytes": largest,
        "read_p50_ms": latencies[len(latencies) // 2] * 1000,
        "read_p99_ms": latencies[int(len(latencies) * 0.99) - 1] * 1000,
        "one_object_peak_mib": legacy_rss.mib,
        "one_object_bytes": (folder / "state" / "legacy" / "tree.json").stat().st_size,
        "one_object_read_ms": legacy_read * 1000,
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--tables", type=int, nargs="+", default=[100_000, 1_000_000])
    parser.add_argument("--per-namespace", type=int, default=1_000)
    parser.add_argument("--one", nargs=2, metavar=("FOLDER", "TABLES"))
    arguments = parser.parse_args()
    if arguments.one:
        print(json.dumps(one(Path(arguments.one[0]), int(arguments.one[1]))))
        return
    print(
        f"{'tables':>10} {'walk s':>7} {'walk MiB':>8} {'objects':>7} {'largest KB':>10} "
        f"{'reads MiB':>9} {'read p50 ms':>11} {'read p99 ms':>11} | "
        f"{'one-object peak MiB':>19} {'its KB':>8} {'its read ms':>11}"
    )
    for tables in arguments.tables:
        with tempfile.TemporaryDirectory() as folder:
            _seed(Path(folder), tables, arguments.per_namespace)
            command = [sys.executable, "-m", "bench.enumeration", "--one", folder, str(tables)]
            run = subprocess.run(command, check=True, capture_output=True, text=True)
        result = json.loads(run.stdout)
        print(
            f"{tables:>10,} {result['walk_seconds']:>7.1f} {result['walk_peak_mib']:>8.0f} "
            f"{result['objects']:>7} {result['largest_object_bytes'] / 1024:>10.0f} "
            f"{result['read_peak_mib']:>9.0f} {result['read_p50_ms']:>11.1f} "
            f"{result['read_p99_ms']:>11.1f} | "
            f"{result['one_object_peak_mib']:>19.0f} {result['one_object_bytes'] / 1024:>8.0f} "
            f"{result['one_object_read_ms']:>11.0f}",
            flush=True,
        )


if __name__ == "__main__":
    run_then_exit(main)
