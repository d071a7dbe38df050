"""What the catalog guards cost, on a namespace of N tables, for the SQLite catalog and SeaweedFS's
Iceberg REST catalog: the live-table guard's catalog calls and seconds per overlap scope (cold
and warm location cache), and a whole purge by name with the guard on against one with it off
(off first, so the worker's first-purge warm-up is not charged to the guard).

    .venv/bin/python -m bench.guard_cost --tables 100
"""

from __future__ import annotations

import argparse
import asyncio
import os
import time

from pyiceberg.catalog import Catalog, load_catalog
from pyiceberg.table import Table

from bench.bench_stack import bench_stack
from icepurge.api.clients.temporal_client import PurgeClient
from icepurge.catalogs.live_tables import FootprintCache, LiveTableScanner, PurgedTable
from icepurge.catalogs.locations import table_locations
from icepurge.connection.connect import connect
from icepurge.connection.exit_now import run_then_exit
from icepurge.contract.request import OverlapScope
from icepurge.contract.status import GuardName
from icepurge.devstack.catalog_env import pyiceberg_catalog_env
from icepurge.devstack.process import ServiceProcess
from icepurge.devstack.small_tables import SCHEMA, create_demo_table
from icepurge.devstack.stack import EmbeddedStack

QUEUE = "bench-guard"
SQL, REST, TABLE_BUCKET = "benchsql", "benchrest", "bench-guard-tables"
NAMESPACE = ("bench", "wide")


def _populate(catalog: Catalog, tables: int) -> None:
    catalog.create_namespace_if_not_exists(NAMESPACE)
    for index in range(tables):
        catalog.create_table((*NAMESPACE, f"neighbour_{index:04d}"), schema=SCHEMA)


def _scan_costs(name: str, catalog: Catalog, victim: Table) -> None:
    """The scan as it runs for a dropped table: its identifier no longer resolves."""
    catalog.drop_table(victim.name())
    metadata = victim.metadata
    purged = PurgedTable(
        catalog=name,
        identifier=(*NAMESPACE, victim.name()[-1]),
        metadata_location=victim.metadata_location,
        locations=tuple(table_locations(metadata.location, metadata.properties)),
    )
    cache = FootprintCache(ttl_seconds=60)
    scanner = LiveTableScanner(cache, concurrency=8)
    runs = [
        ("table", OverlapScope.TABLE),
        ("namespace, cold cache", OverlapScope.NAMESPACE),
        ("namespace, warm cache", OverlapScope.NAMESPACE),
        ("catalog, warm cache", OverlapScope.CATALOG),
    ]
    for label, scope in runs:
        started = time.perf_counter()
        scan = scanner.scan(catalog, purged, scope, lambda: None)
        seconds = time.perf_counter() - started
        print(
            f"  {name:<10} guard scope {label:<22} {scan.catalog_calls:>4} catalog calls, "
            f"{scan.tables_compared:>4} tables compared, {seconds:6.3f} s"
            + (f", refused: {scan.refusal}" if scan.refusal else "")
        )


async def _purges(stack: EmbeddedStack, name: str, victims: dict[bool, Table]) -> None:
    client = PurgeClient(await connect(stack.temporal_settings()), QUEUE)
    for guarded, victim in victims.items():
        started = time.perf_counter()
        purge_id = await client.purge_by_name(
            name,
            list(NAMESPACE),
            victim.name()[-1],
            requested_by="bench",
            options={"live_table_guard": guarded},
        )
        report = await client.wait(purge_id)
        seconds = time.perf_counter() - started
        guard = next(guard for guard in report.status.guards if guard.guard is GuardName.LIVE_TABLE)
        protection = next(guard for guard in report.status.guards if guard.guard is GuardName.PROTECTION)
        print(
            f"  {name:<10} purge by name, guard {'on ' if guarded else 'off'}: {seconds:6.2f} s, "
            f"{report.status.files_done} files, {report.status.state.value}; live-table guard "
            f"{guard.catalog_calls} calls {guard.seconds:.3f} s, protection {protection.catalog_calls} calls"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--tables", type=int, default=100, help="Tables in the namespace besides the purged.")
    arguments = parser.parse_args()
    with bench_stack("icepurge-bench-guard-") as (_, stack):
        worker: ServiceProcess | None = None
        try:
            stack.create_table_bucket(TABLE_BUCKET)
            configured = {
                SQL: stack.catalog_properties(SQL),
                REST: stack.rest_catalog_properties(TABLE_BUCKET),
            }
            for name, properties in configured.items():
                os.environ.update(pyiceberg_catalog_env(name, properties))
            worker = stack.worker_process("bench-guard-worker", ICEPURGE_TASK_QUEUE=QUEUE)
            worker.start()
            print(
                f"namespace {'.'.join(NAMESPACE)} with {arguments.tables} other tables, guard concurrency 8"
            )
            for name, properties in configured.items():
                catalog = load_catalog(name, **properties)
                started = time.perf_counter()
                _populate(catalog, arguments.tables)
                took = time.perf_counter() - started
                print(f"  {name:<10} created {arguments.tables} tables in {took:.1f} s")
                victims = {
                    guarded: create_demo_table(catalog, NAMESPACE, f"victim_{'on' if guarded else 'off'}")
                    for guarded in (False, True)
                }
                _scan_costs(name, catalog, create_demo_table(catalog, NAMESPACE, "scanned"))
                asyncio.run(_purges(stack, name, victims))
        finally:
            if worker is not None:
                worker.stop()


if __name__ == "__main__":
    run_then_exit(main)
