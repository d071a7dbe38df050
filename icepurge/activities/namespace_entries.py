"""What a catalog holds in a namespace, as far as the catalog can tell: its Iceberg tables, and
every other entry (views, other engines' kinds) that a namespace purge leaves alone and that
keeps the namespace from being dropped.

PyIceberg's SQL catalog lists neither views nor other kinds, though Iceberg Java's JDBC catalog
writes views into the same table (`iceberg_type` VIEW), and its drop_namespace then drops the
namespace's entry from under them: its rows are read directly. REST and Hive catalogs refuse to
drop a namespace that holds anything, whatever PyIceberg lists. Other catalog types can't tell
(AWS Glue drops a database with every table in it): their namespaces are kept, and the report
says why.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from pyiceberg.catalog import Catalog
from pyiceberg.catalog.rest import RestCatalog
from pyiceberg.catalog.sql import ICEBERG_TABLE_TYPE, IcebergNamespaceProperties, IcebergTables, SqlCatalog
from pyiceberg.exceptions import NoSuchNamespaceError
from pyiceberg.typedef import Identifier
from sqlalchemy import select
from sqlalchemy.exc import OperationalError, ProgrammingError
from sqlalchemy.orm import Session

VIEW = "view"
# Catalogs whose server refuses to drop a namespace that holds anything (by module: importing
# the Hive catalog needs Thrift, which a deployment without Hive doesn't install).
_REFUSING_MODULES = frozenset({"pyiceberg.catalog.hive"})


@dataclass(frozen=True)
class Entry:
    """An entry that is not an Iceberg table: a view, or a kind some other engine wrote."""

    identifier: Identifier
    kind: str


@dataclass(frozen=True)
class NamespaceEntries:
    tables: list[Identifier] = field(default_factory=list)
    others: list[Entry] = field(default_factory=list)
    # Why the catalog can't tell what else it holds: its namespace is then kept.
    unknowable: str | None = None
    # False for a level that is only a prefix of deeper namespaces: a SQL catalog lists
    # `a.b` of a namespace ["a.b", "c"] as a level of its own, which has nothing to drop.
    own_entry: bool = True


def spelled_as_listed(catalog: Catalog, levels: Sequence[str]) -> Identifier:
    """The namespace as the catalog lists it. A SQL catalog keeps a namespace as its levels
    joined by dots and lists it split at every dot: ["a.b"] is ("a", "b") there, and a walk
    from ("a.b",) would find none of its nested namespaces."""
    if levels and isinstance(catalog, SqlCatalog):
        return Catalog.identifier_to_tuple(".".join(levels))
    return tuple(levels)


def namespace_entries(catalog: Catalog, namespace: Identifier) -> NamespaceEntries:
    """Everything in `namespace` itself (not its nested namespaces); empty when it is gone."""
    if not namespace:
        return NamespaceEntries()
    if isinstance(catalog, SqlCatalog):
        return _sql_rows(catalog, namespace)
    try:
        tables = sorted(catalog.list_tables(namespace))
    except NoSuchNamespaceError:
        return NamespaceEntries()
    views, unknowable = _views(catalog, namespace)
    return NamespaceEntries(tables, [Entry(view, VIEW) for view in views], unknowable)


def _views(catalog: Catalog, namespace: Identifier) -> tuple[list[Identifier], str | None]:
    try:
        views = sorted(catalog.list_views(namespace))
    except NoSuchNamespaceError:
        return [], None
    except NotImplementedError:
        views = []
    if isinstance(catalog, RestCatalog) or type(catalog).__module__ in _REFUSING_MODULES:
        return views, None
    return views, (
        f"a {type(catalog).__name__} can't list every entry it holds (views, other engines' tables), "
        "and may drop them with the namespace; drop the namespace yourself once it is empty"
    )


def _sql_rows(catalog: SqlCatalog, namespace: Identifier) -> NamespaceEntries:
    """Every row of the namespace in the catalog's own table, whoever wrote it."""
    name = Catalog.namespace_to_string(namespace)
    where = (IcebergTables.catalog_name == catalog.name, IcebergTables.table_namespace == name)
    with Session(catalog.engine) as session:
        properties = select(IcebergNamespaceProperties.namespace).where(
            IcebergNamespaceProperties.catalog_name == catalog.name,
            IcebergNamespaceProperties.namespace == name,
        )
        own_properties = session.scalars(properties.limit(1)).first() is not None
        rows: list[tuple[str, str | None]]
        try:
            typed = session.execute(
                select(IcebergTables.table_name, IcebergTables.iceberg_type).where(*where)
            )
            rows = [(name, kind) for name, kind in typed]
        except (OperationalError, ProgrammingError):
            # A schema without iceberg_type (v0) holds nothing but tables.
            session.rollback()
            rows = [(name, None) for name in session.scalars(select(IcebergTables.table_name).where(*where))]
    tables: list[Identifier] = []
    others: list[Entry] = []
    for name, kind in sorted(rows):
        identifier = (*namespace, name)
        if kind is None or kind.upper() == ICEBERG_TABLE_TYPE:
            tables.append(identifier)
        else:
            others.append(Entry(identifier, kind.lower()))
    return NamespaceEntries(tables, others, own_entry=own_properties or bool(rows))
