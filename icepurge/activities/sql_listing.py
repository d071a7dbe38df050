"""The SQL catalog's table listing with each table's current metadata file, in the one query its
own `list_tables` makes: what lets the live-table guard skip re-reading metadata it has seen."""

from __future__ import annotations

from collections.abc import Iterator

from pyiceberg.catalog import Catalog
from pyiceberg.catalog.sql import IcebergTables, SqlCatalog
from pyiceberg.exceptions import NoSuchNamespaceError
from sqlalchemy import select
from sqlalchemy.orm import Session


def sql_tables_with_metadata(
    catalog: SqlCatalog, namespace: tuple[str, ...]
) -> Iterator[tuple[tuple[str, ...], str]]:
    """As `catalog.list_tables(namespace)`, with each table's metadata location (its views left out,
    as that listing leaves them out)."""
    if namespace and not catalog.namespace_exists(namespace):
        raise NoSuchNamespaceError(f"Namespace does not exist: {namespace}")
    statement = select(IcebergTables.table_name, IcebergTables.metadata_location).where(
        IcebergTables.catalog_name == catalog.name,
        IcebergTables.table_namespace == Catalog.namespace_to_string(namespace),
    )
    type_filter = catalog._iceberg_type_filter()
    if type_filter is not None:
        statement = statement.where(type_filter)
    with Session(catalog.engine) as session:
        rows = session.execute(statement).all()
    for name, metadata_location in rows:
        if metadata_location:
            yield (*namespace, name), metadata_location
