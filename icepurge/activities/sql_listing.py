"""The SQL catalog's table listing with each table's current metadata file, in the one query its
own `list_tables` makes: what lets the live-table guard skip re-reading metadata it has seen."""

from __future__ import annotations

from contextlib import closing

from pyiceberg.catalog import Catalog
from pyiceberg.catalog.sql import IcebergTables, SqlCatalog
from pyiceberg.exceptions import NoSuchNamespaceError
from sqlalchemy import select


def sql_tables_with_metadata(catalog: SqlCatalog, namespace: tuple[str, ...]) -> dict[tuple[str, ...], str]:
    """As `catalog.list_tables(namespace)`, with each table's metadata location (its views left out,
    as that listing leaves them out). Read off the driver's cursor: a guard lists a namespace of
    10,000 tables per purged table, and SQLAlchemy's rows cost as much again as the query."""
    if namespace and not catalog.namespace_exists(namespace):
        raise NoSuchNamespaceError(f"Namespace does not exist: {namespace}")
    columns = IcebergTables.__table__.c
    statement = select(columns.table_name, columns.metadata_location).where(
        columns.catalog_name == catalog.name,
        columns.table_namespace == Catalog.namespace_to_string(namespace),
    )
    type_filter = catalog._iceberg_type_filter()
    if type_filter is not None:
        statement = statement.where(type_filter)
    compiled = statement.compile(dialect=catalog.engine.dialect)
    values = compiled.construct_params()
    positional = compiled.positional and compiled.positiontup is not None
    parameters = tuple(values[key] for key in compiled.positiontup or ()) if positional else values
    with closing(catalog.engine.raw_connection()) as connection, closing(connection.cursor()) as cursor:
        cursor.execute(str(compiled), parameters)
        rows = cursor.fetchall()
    return {(*namespace, name): metadata_location for name, metadata_location in rows if metadata_location}
