"""Small real tables in `make run`'s demo catalog, for the README's walkthroughs:

    .venv/bin/python -m icepurge.devstack.demo_tables create sales orders   # 3 appends of 10 rows
    .venv/bin/python -m icepurge.devstack.demo_tables rows sales orders     # reads it through the catalog

The namespace is dot-separated. Uses the same state directory and ports as `make run`."""

from __future__ import annotations

import sys

import pyarrow as pa
from pyiceberg.catalog import Catalog
from pyiceberg.exceptions import NoSuchTableError
from pyiceberg.schema import Schema
from pyiceberg.table import Table
from pyiceberg.types import LongType, NestedField, StringType

from icepurge.devstack.run import DEMO_CATALOG, run_ports, run_state_dir
from icepurge.devstack.stack import EmbeddedStack

SCHEMA = Schema(
    NestedField(1, "id", LongType(), required=False),
    NestedField(2, "note", StringType(), required=False),
)
APPENDS, ROWS = 3, 10


def create_demo_table(catalog: Catalog, levels: tuple[str, ...], name: str) -> Table:
    """Three appends of ten rows: a real, small table."""
    catalog.create_namespace_if_not_exists(levels)
    table = catalog.create_table((*levels, name), schema=SCHEMA)
    for batch in range(APPENDS):
        ids = range(batch * ROWS, (batch + 1) * ROWS)
        table.append(pa.table({"id": pa.array(ids, pa.int64()), "note": pa.array([f"row {i}" for i in ids])}))
    return table


def main(arguments: list[str]) -> int:
    if len(arguments) != 3 or arguments[0] not in ("create", "rows"):
        print(__doc__, file=sys.stderr)
        return 2
    action, namespace, name = arguments
    levels = tuple(namespace.split("."))
    catalog = EmbeddedStack(state_dir=run_state_dir(), ports=run_ports()).catalog(DEMO_CATALOG)
    if action == "create":
        table = create_demo_table(catalog, levels, name)
        print(f"{DEMO_CATALOG}.{namespace}.{name}: {APPENDS * ROWS} rows at {table.location()}")
        return 0
    try:
        table = catalog.load_table((*levels, name))
    except NoSuchTableError:
        print(f"{DEMO_CATALOG}.{namespace}.{name} is not in the catalog")
        return 1
    print(f"{DEMO_CATALOG}.{namespace}.{name}: {table.scan().to_arrow().num_rows} rows")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
