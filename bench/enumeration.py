"""A namespace purge's enumeration and table list at scale: the real enumerate activity walking a
real SQLite catalog of N tables (catalog rows written straight into PyIceberg's SQL schema: the
walk lists, it never loads a table), its list written to a local state location in pages, then
read back by the batches' reader at random offsets. Each size runs in a process of its own, so
its peak RSS is its own.

    .venv/bin/python -m bench.enumeration --tables 100000 1000000 [--per-namespace 1000]

For each size, in the same run: the paged list (today's) and one object holding every name (the
list as it was written before pages, rebuilt here from the same walk): walk seconds, peak RSS
over the process's start, objects written and the largest, and the reader's latency for 100
reads of 32 names at random offsets from a cold cache.

One size in this process: `python -m bench.enumeration --one N PER_NAMESPACE`.
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from pyiceberg.catalog.sql import SqlCatalog
from temporalio.testing import ActivityEnvironment

from icepurge.activities.namespace.namespace_activities import NamespaceActivities
from icepurge.activities.namespace.table_lists import NamespaceTree, TableLists
from icepurge.catalogs.configured import CatalogRegistry
from icepurge.contract.namespace_steps import EnumerateInput
from icepurge.state.state_store import StateStore

CATALOG = "bench"
ROOT = "enum"
READS = 100
READ_NAMES = 32


def _peak_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _seed(folder: Path, tables: int, per_namespace: int) -> dict[str, str]:
    properties = {"uri": f"sqlite:///{folder}/catalog.db", "warehouse": f"file://{folder}/warehouse"}
    catalog = SqlCatalog(CATALOG, **properties)
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
    return {"type": "sql", **properties}


def _objects(folder: Path) -> tuple[int, int]:
    sizes = [path.stat().st_size for path in folder.rglob("*.json")]
    return len(sizes), max(sizes, default=0)


def one(tables: int, per_namespace: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as temporary:
        folder = Path(temporary)
        registry = CatalogRegistry({CATALOG: _seed(folder, tables, per_namespace)})
        start_mib = _peak_mib()
        state = StateStore(f"file://{folder}/state", {})
        lists = TableLists(state)
        activities = NamespaceActivities(registry, state, lists)
        step = EnumerateInput(purge_id="p", catalog=CATALOG, namespace=[ROOT], nested=True, run_chain="paged")
        began = time.perf_counter()
        summary = ActivityEnvironment().run(activities.enumerate_namespace, step)
        walk = time.perf_counter() - began
        paged_mib = _peak_mib() - start_mib
        assert summary.tables_total == tables, summary
        objects, largest = _objects(folder / "state")
        generator = random.Random(tables)
        latencies = []
        for _ in range(READS):
            offset = generator.randrange(tables)
            began = time.perf_counter()
            TableLists(state).names(summary.tree_location, offset, READ_NAMES)
            latencies.append(time.perf_counter() - began)
        latencies.sort()
        # The list as one object, built from the same walk's pages: what enumeration held before.
        began = time.perf_counter()
        every = lists.names(summary.tree_location, 0, tables)
        legacy = state.uri("legacy", "tree.json")
        state.write(legacy, NamespaceTree(tables=every, namespaces=[], skipped=[]), compress=True)
        legacy_write = time.perf_counter() - began
        del every
        legacy_mib = _peak_mib() - start_mib
        legacy_bytes = (folder / "state" / "legacy" / "tree.json").stat().st_size
        began = time.perf_counter()
        TableLists(state).names(legacy, tables // 2, READ_NAMES)
        legacy_read = time.perf_counter() - began
        return {
            "tables": tables,
            "walk_seconds": walk,
            "paged_peak_mib": paged_mib,
            "objects": objects,
            "largest_object_bytes": largest,
            "read_p50_ms": latencies[len(latencies) // 2] * 1000,
            "read_p99_ms": latencies[int(len(latencies) * 0.99) - 1] * 1000,
            "one_object_peak_mib": legacy_mib,
            "one_object_bytes": legacy_bytes,
            "one_object_build_seconds": legacy_write,
            "one_object_read_ms": legacy_read * 1000,
        }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--tables", type=int, nargs="+", default=[100_000, 1_000_000])
    parser.add_argument("--per-namespace", type=int, default=1_000)
    parser.add_argument("--one", type=int, nargs=2, metavar=("TABLES", "PER_NAMESPACE"))
    arguments = parser.parse_args()
    if arguments.one:
        print(json.dumps(one(*arguments.one)))
        return
    print(
        f"{'tables':>10} {'walk s':>7} {'paged peak MiB':>14} {'objects':>7} {'largest KB':>10} "
        f"{'read p50 ms':>11} {'read p99 ms':>11} | "
        f"{'one-object peak MiB':>19} {'its KB':>8} {'its read ms':>11}"
    )
    for tables in arguments.tables:
        command = [
            sys.executable,
            "-m",
            "bench.enumeration",
            "--one",
            str(tables),
            str(arguments.per_namespace),
        ]
        result = json.loads(subprocess.run(command, check=True, capture_output=True, text=True).stdout)
        print(
            f"{tables:>10,} {result['walk_seconds']:>7.1f} {result['paged_peak_mib']:>14.0f} "
            f"{result['objects']:>7} {result['largest_object_bytes'] / 1024:>10.0f} "
            f"{result['read_p50_ms']:>11.1f} {result['read_p99_ms']:>11.1f} | "
            f"{result['one_object_peak_mib']:>19.0f} {result['one_object_bytes'] / 1024:>8.0f} "
            f"{result['one_object_read_ms']:>11.0f}",
            flush=True,
        )


if __name__ == "__main__":
    main()
