"""What the namespace-scope live-table guard costs per purged table as the namespace grows: N
tables in a SQL catalog (SQLite, local warehouse), then a namespace purge's sequence of guards —
drop one table, guard it, next — timed in the worker's scanner alone. Each table lives at an
s3:// location, as a lake's tables do (its metadata is written to local disk through
`write.metadata.path`, so no store is needed): s3 locations cost a URL parse to normalize.
A namespace purge runs one guard per table, so a per-guard cost that grows with N makes the
purge quadratic. With --threads N the guards after the first run N at once, as a namespace
purge's batches run them: the line then says the guards done per second and the catalog calls
each guard made (its own table's load, and the namespace's listing unless it shared another's).

    .venv/bin/python -m bench.guard_scale --tables 100 1000 10000 --guards 200 [--threads 16]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from pyiceberg.catalog.sql import SqlCatalog

from icepurge.catalogs.live_tables import FootprintCache, LiveTableScanner, PurgedTable
from icepurge.connection.exit_now import run_then_exit
from icepurge.contract.request import OverlapScope
from icepurge.devstack.guarded_tables import dropped_for_guard
from icepurge.devstack.small_tables import SCHEMA

NAMESPACE = ("bench", "wide")


def _guards(tables: int, guards: int, threads: int) -> None:
    with tempfile.TemporaryDirectory(prefix="icepurge-guard-scale-") as folder:
        catalog = SqlCatalog(
            "scale", uri=f"sqlite:///{Path(folder) / 'c.sqlite'}", warehouse=Path(folder).as_uri()
        )
        catalog.create_namespace(NAMESPACE)
        started = time.perf_counter()
        for index in range(tables):
            name = f"t{index:05d}"
            catalog.create_table(
                (*NAMESPACE, name),
                schema=SCHEMA,
                location=f"s3://bench-lake/wide/{name}",
                properties={"write.metadata.path": f"{Path(folder).as_uri()}/metadata/{name}"},
            )
        created = time.perf_counter() - started
        scanner = LiveTableScanner(FootprintCache(ttl_seconds=60), concurrency=8)

        def dropped(index: int) -> PurgedTable:
            return dropped_for_guard(catalog, (*NAMESPACE, f"t{index:05d}"))

        def guard(purged: PurgedTable) -> tuple[float, int]:
            started = time.perf_counter()
            scan = scanner.scan(catalog, purged, OverlapScope.NAMESPACE, lambda: None)
            assert scan.refusal is None, scan.refusal
            return time.perf_counter() - started, scan.catalog_calls

        cold, _ = guard(dropped(0))
        # Dropped first, one at a time (SQLite takes one writer at a time): the guards alone run
        # at once, as a namespace purge's batches run them.
        purged = [dropped(index) for index in range(1, min(guards, tables))]
        started = time.perf_counter()
        with ThreadPoolExecutor(threads) as pool:
            warm = list(pool.map(guard, purged))
        warm_seconds = time.perf_counter() - started
        cells = [
            f"{tables:,}",
            f"{created:.1f} s",
            f"{cold * 1000:,.1f}",
            f"{statistics.median(seconds for seconds, _ in warm) * 1000:.2f}",
            f"{max(seconds for seconds, _ in warm) * 1000:.2f}",
            str(len(warm) + 1),
            str(threads),
            f"{len(warm) / warm_seconds:,.0f}",
            f"{statistics.mean(calls for _, calls in warm):.2f}",
        ]
        print(f"| {' | '.join(cells)} |", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--tables", type=int, nargs="+", default=[100, 1_000, 10_000])
    parser.add_argument("--guards", type=int, default=200, help="Guards timed per namespace size.")
    parser.add_argument("--threads", type=int, default=1, help="Warm guards at once.")
    arguments = parser.parse_args()
    print(
        "| tables in the namespace | created in | first guard (cold), ms | warm guard median, ms "
        "| warm max, ms | guards | at once | warm guards/s | catalog calls a guard |"
    )
    print("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for tables in arguments.tables:
        _guards(tables, arguments.guards, arguments.threads)


if __name__ == "__main__":
    run_then_exit(main)
