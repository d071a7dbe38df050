"""The SQL catalog kind answers whether a namespace exists, and its properties, as PyIceberg's
calls do, for every shape a namespace takes: with tables, with properties of its own, holding only
nested namespaces, a table written without its namespace's row, absent. And it answers by key:
the work SQLite does for a call doesn't grow with the tables of the namespaces before it, where
PyIceberg's `namespace = ? OR namespace LIKE ?` read them all."""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path

from pyiceberg.catalog.sql import IcebergTables, SqlCatalog
from pyiceberg.exceptions import NoSuchNamespaceError
from pyiceberg.typedef import Identifier
from sqlalchemy import event, insert
from sqlalchemy.orm import Session

from icepurge.catalogs.kind import CatalogKind
from icepurge.catalogs.protection import protected_ancestor
from icepurge.catalogs.sql import SqlCatalogKind
from icepurge.contract.names import PROTECTED_PROPERTY
from tests.tables import simple_table

SHAPES: list[Identifier] = [
    ("a",),
    ("a", "b"),
    ("a", "b", "c"),
    ("a", "props"),
    ("bare",),
    ("bare", "child"),
    ("missing",),
    ("a", "missing"),
    ("A",),
]


def _catalog(tmp_path: Path) -> SqlCatalog:
    catalog = SqlCatalog("lookups", uri=f"sqlite:///{tmp_path}/c.db", warehouse=f"file://{tmp_path}/w")
    catalog.create_namespace(("a",), {"owner": "me"})
    catalog.create_namespace(("a", "props"), {PROTECTED_PROPERTY: "true"})
    simple_table(catalog, ("a", "b", "c"), "t", appends=0)
    # A table another engine wrote with no row for its namespace (nor its parent's).
    with Session(catalog.engine) as session:
        session.execute(
            insert(IcebergTables).values(
                catalog_name=catalog.name,
                table_namespace="bare.child",
                table_name="t",
                metadata_location="file:///nowhere/v1.metadata.json",
            )
        )
        session.commit()
    return catalog


def _properties(kind: CatalogKind, namespace: Identifier) -> object:
    try:
        return kind.namespace_properties(namespace)
    except NoSuchNamespaceError:
        return NoSuchNamespaceError


def test_the_sql_kind_answers_as_pyicebergs_calls_for_every_shape(tmp_path: Path) -> None:
    catalog = _catalog(tmp_path)
    sql, generic = SqlCatalogKind(catalog), CatalogKind(catalog)
    for namespace in SHAPES:
        assert sql.namespace_exists(namespace) == generic.namespace_exists(namespace), namespace
        assert _properties(sql, namespace) == _properties(generic, namespace), namespace
    assert protected_ancestor(sql, ["a", "props", "x"]) == protected_ancestor(generic, ["a", "props", "x"])
    assert protected_ancestor(sql, ["a", "props", "x"])[0] == "namespace a.props"


def _seeded(tmp_path: Path, namespaces: int) -> SqlCatalog:
    catalog = SqlCatalog(
        "sized", uri=f"sqlite:///{tmp_path}/s{namespaces}.db", warehouse=f"file://{tmp_path}"
    )
    rows = [
        {
            "catalog_name": catalog.name,
            "table_namespace": f"top.ns{index:04d}",
            "table_name": f"t{table:03d}",
            "metadata_location": f"file:///nowhere/{index}/{table}.metadata.json",
        }
        for index in range(namespaces)
        for table in range(200)
    ]
    catalog.create_namespace(("top",))
    for index in range(namespaces):
        catalog.create_namespace(("top", f"ns{index:04d}"))
    with Session(catalog.engine) as session:
        session.execute(insert(IcebergTables), rows)
        session.commit()
    return catalog


def _steps(catalog: SqlCatalog, call: Callable[[], object]) -> int:
    """SQLite's virtual machine instructions the call ran: its work, whatever the machine's pace."""
    counted = [0]

    def count() -> int:
        counted[0] += 1
        return 0

    def on_connect(connection: object, _: object) -> None:
        connection.set_progress_handler(count, 1)  # type: ignore[attr-defined]

    catalog.engine.dispose()
    event.listen(catalog.engine, "connect", on_connect)
    try:
        call()
    finally:
        event.remove(catalog.engine, "connect", on_connect)
        catalog.engine.dispose()
    return counted[0]


def _lookups(kind: CatalogKind, namespace: Identifier) -> object:
    """What a purge asks of a table's namespace: exists, the protection walk, the guard's listing."""
    return (
        kind.namespace_exists(namespace),
        protected_ancestor(kind, list(namespace)),
        kind.tables_with_metadata(namespace),
    )


def _lookup_steps(tmp_path: Path, kind: Callable[[SqlCatalog], CatalogKind]) -> tuple[int, int]:
    """The steps of a table's lookups in the last namespace of a catalog of 2, then of 50
    namespaces of 200 tables."""
    steps = []
    for namespaces in (2, 50):
        catalog = _seeded(tmp_path, namespaces)
        namespace: Identifier = ("top", f"ns{namespaces - 1:04d}")
        looked_up = kind(catalog)
        looked_up.namespace_exists(namespace)  # the statements compiled, as in a running worker
        steps.append(_steps(catalog, functools.partial(_lookups, looked_up, namespace)))
    return steps[0], steps[1]


def test_a_namespace_is_looked_up_by_key_whatever_comes_before_it(tmp_path: Path) -> None:
    small, large = _lookup_steps(tmp_path, SqlCatalogKind)
    # 25x the rows before the namespace: through PyIceberg's calls (CatalogKind), 31x the steps.
    assert large < 1.2 * small
