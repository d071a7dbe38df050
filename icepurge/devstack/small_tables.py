"""A real, small table (three appends of ten rows) for the demos and walkthroughs."""

from __future__ import annotations

import pyarrow as pa
from pyiceberg.catalog import Catalog
from pyiceberg.schema import Schema
from pyiceberg.table import Table
from pyiceberg.types import LongType, NestedField, StringType

from icepurge.catalogs.namespace_creation import ensure_namespace

SCHEMA = Schema(
    NestedField(1, "id", LongType(), required=False),
    NestedField(2, "note", StringType(), required=False),
)
APPENDS, ROWS = 3, 10


def create_demo_table(catalog: Catalog, levels: tuple[str, ...], name: str) -> Table:
    """Three appends of ten rows: a real, small table."""
    ensure_namespace(catalog, levels)
    table = catalog.create_table((*levels, name), schema=SCHEMA)
    for batch in range(APPENDS):
        ids = range(batch * ROWS, (batch + 1) * ROWS)
        table.append(pa.table({"id": pa.array(ids, pa.int64()), "note": pa.array([f"row {i}" for i in ids])}))
    return table
