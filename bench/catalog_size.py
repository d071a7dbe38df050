"""What the SQL catalog calls of one small table's purge cost as the catalog grows: N tables in
namespaces of 1,000 under one parent, as `bench.namespace_purge --namespace-tables 1000` seeds
them (each namespace created, the tables' rows written straight into PyIceberg's SQLite tables).
Then, per call, this process's CPU time for: the protection walk (each namespace level's
properties) and the guard's listing of the table's namespace, each through PyIceberg's calls and
through icepurge's SQL kind; a table's row read as load_table reads it; the conditional drop.
Each is asked of a table of the first, middle and last namespace.

    .venv/bin/python -m bench.catalog_size --tables 1000 10000 100000 --calls 200
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from pyiceberg.catalog import Catalog
from pyiceberg.catalog.sql import IcebergTables, SqlCatalog
from sqlalchemy import insert, select
from sqlalchemy.orm import Session

from icepurge.catalogs.kind import CatalogKind
from icepurge.catalogs.protection import protected_ancestor
from icepurge.catalogs.sql import SqlCatalogKind
from icepurge.connection.exit_now import run_then_exit

PARENT = ("bench", "spread")
PER_NAMESPACE = 1_000


def _namespace(index: int) -> tuple[str, ...]:
    return (*PARENT, f"ns_{index:04d}")


def _table(number: int) -> str:
    return f"t_{number:05d}"


def _metadata(namespace: tuple[str, ...], table: str) -> str:
    return f"s3://warehouse/{namespace[-1]}/{table}/metadata/00003-x.metadata.json"


def _seed(catalog: SqlCatalog, tables: int) -> int:
    namespaces = max(1, tables // PER_NAMESPACE)
    rows = [
        {
            "catalog_name": catalog.name,
            "table_namespace": Catalog.namespace_to_string(_namespace(index)),
            "table_name": _table(table),
            "metadata_location": _metadata(_namespace(index), _table(table)),
            "previous_metadata_location": None,
        }
        for index in range(namespaces)
        for table in range(min(PER_NAMESPACE, tables))
    ]
    # As PyIceberg creates them: each level a row of properties of its own.
    for depth in range(1, len(PARENT) + 1):
        catalog.create_namespace(PARENT[:depth])
    for index in range(namespaces):
        catalog.create_namespace(_namespace(index))
    with Session(catalog.engine) as session:
        session.execute(insert(IcebergTables), rows)
        session.commit()
    return namespaces


def _cpu_ms(call: Callable[[], object], calls: int) -> float:
    started = time.process_time()
    for _ in range(calls):
        call()
    return (time.process_time() - started) / calls * 1000


def _load_row(catalog: SqlCatalog, identifier: tuple[str, ...]) -> object:
    with Session(catalog.engine) as session:
        return session.scalar(
            select(IcebergTables).where(
                IcebergTables.catalog_name == catalog.name,
                IcebergTables.table_namespace == Catalog.namespace_to_string(identifier[:-1]),
                IcebergTables.table_name == identifier[-1],
            )
        )


def _figures(catalog: SqlCatalog, namespace: tuple[str, ...], calls: int) -> dict[str, float]:
    sql = SqlCatalogKind(catalog)
    generic = CatalogKind(catalog)
    identifier = (*namespace, _table(0))
    levels = list(namespace)
    # Each call drops another table of the namespace, as its purge does.
    dropped = iter(range(1, PER_NAMESPACE))

    def drop() -> object:
        table = _table(next(dropped))
        return sql.drop_if_current((*namespace, table), _metadata(namespace, table))

    return {
        "protection walk: PyIceberg's": _cpu_ms(lambda: protected_ancestor(generic, levels), calls),
        "by key": _cpu_ms(lambda: protected_ancestor(sql, levels), calls),
        "guard listing: PyIceberg's": _cpu_ms(lambda: generic.tables_with_metadata(namespace), calls),
        "icepurge's": _cpu_ms(lambda: sql.tables_with_metadata(namespace), calls),
        "table row": _cpu_ms(lambda: _load_row(catalog, identifier), calls),
        "drop": _cpu_ms(drop, min(calls, PER_NAMESPACE - 1)),
    }


def _measure(tables: int, calls: int) -> None:
    with tempfile.TemporaryDirectory(prefix="icepurge-catalog-size-") as folder:
        uri = f"sqlite:///{Path(folder) / 'c.sqlite'}"
        catalog = SqlCatalog("size", uri=uri, warehouse=Path(folder).as_uri())
        namespaces = _seed(catalog, tables)
        for place, index in (("first", 0), ("middle", namespaces // 2), ("last", namespaces - 1)):
            figures = _figures(catalog, _namespace(index), calls)
            shown = ", ".join(f"{name} {ms:.2f}" for name, ms in figures.items())
            print(f"{tables:>7,} tables, {place:<6} namespace, ms of CPU a call: {shown}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--tables", type=int, nargs="+", default=[1_000, 10_000, 100_000])
    parser.add_argument("--calls", type=int, default=200)
    arguments = parser.parse_args()
    for tables in arguments.tables:
        _measure(tables, arguments.calls)


if __name__ == "__main__":
    run_then_exit(main)
