"""The SQL catalog's drop of a table entry on one condition, in one statement: that the entry still
points at the metadata file a purge planned. A load to check, then a drop, cost a second metadata
read and parse per table, and left a moment between the check and the drop."""

from __future__ import annotations

from typing import TypeGuard

from pyiceberg.catalog import Catalog
from pyiceberg.catalog.sql import IcebergTables, SqlCatalog
from sqlalchemy import CursorResult, delete
from sqlalchemy.orm import Session


def keeps_storage_on_drop(catalog: Catalog) -> bool:
    """PyIceberg's SQL catalog drops the entry and nothing else: no need to look whether the
    drop took the table's storage (as S3 Tables' does)."""
    return isinstance(catalog, SqlCatalog)


def takes_conditional_drop(catalog: Catalog) -> TypeGuard[SqlCatalog]:
    return isinstance(catalog, SqlCatalog) and catalog.engine.dialect.supports_sane_rowcount


def drop_if_current(catalog: SqlCatalog, identifier: tuple[str, ...], metadata_location: str) -> bool:
    """True: dropped. False: no entry of that name points at that file (gone, or changed)."""
    *namespace, name = identifier
    columns = IcebergTables.__table__.c
    statement = delete(IcebergTables).where(
        columns.catalog_name == catalog.name,
        columns.table_namespace == Catalog.namespace_to_string(tuple(namespace)),
        columns.table_name == name,
        columns.metadata_location == metadata_location,
    )
    type_filter = catalog._iceberg_type_filter()
    if type_filter is not None:
        statement = statement.where(type_filter)
    with Session(catalog.engine) as session:
        result = session.execute(statement)
        dropped = isinstance(result, CursorResult) and result.rowcount == 1
        session.commit()
    return dropped
