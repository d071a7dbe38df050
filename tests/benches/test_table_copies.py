"""The namespace bench's copies of a real table are tables of their own: PyIceberg reads each
back whole, every file a copy names lies under its own location, and purging a copy leaves the
template and the other copies whole."""

from __future__ import annotations

import sqlite3
import uuid
from contextlib import closing
from pathlib import Path

import pytest
from pyiceberg.catalog.sql import SqlCatalog
from pyiceberg.table import Table
from sqlalchemy import event
from sqlalchemy.exc import OperationalError

from bench.table_copies import copy_table, seeding_order
from icepurge.devstack.small_tables import create_demo_table
from icepurge.devstack.stack import EmbeddedStack

INSERT_TABLE = (
    "INSERT INTO iceberg_tables (catalog_name, table_namespace, table_name, metadata_location)"
    " VALUES (?, ?, ?, ?)"
)


def _files(table_location: str, catalog: SqlCatalog, identifier: tuple[str, ...]) -> set[str]:
    table = catalog.load_table(identifier)
    named = {table.metadata_location} | {entry.metadata_file for entry in table.metadata.metadata_log}
    for snapshot in table.snapshots():
        named.add(snapshot.manifest_list)
        for manifest in snapshot.manifests(table.io):
            named.add(manifest.manifest_path)
            named |= {entry.data_file.file_path for entry in manifest.fetch_manifest_entry(table.io)}
    assert all(path.startswith(table_location + "/") for path in named), named
    return named


def test_copies_are_whole_tables_of_their_own(catalog: SqlCatalog, stack: EmbeddedStack) -> None:
    namespace = ("copies", f"n{uuid.uuid4().hex[:8]}")
    template = create_demo_table(catalog, namespace, "t00000")
    locations = copy_table(catalog, template, ["t00001", "t00002"], stack.s3_properties, threads=2)

    rows = sorted(template.scan().to_arrow().column("id").to_pylist())
    assert len(rows) == 30
    uuids = {template.metadata.table_uuid}
    for name, location in zip(["t00001", "t00002"], locations, strict=True):
        copy = catalog.load_table((*namespace, name))
        assert copy.location() == location
        assert sorted(copy.scan().to_arrow().column("id").to_pylist()) == rows
        assert len(_files(location, catalog, (*namespace, name))) == 13
        uuids.add(copy.metadata.table_uuid)
    assert len(uuids) == 3

    catalog.purge_table((*namespace, "t00001"))
    assert len(_files(template.location(), catalog, (*namespace, "t00000"))) == 13
    other = catalog.load_table((*namespace, "t00002"))
    assert sorted(other.scan().to_arrow().column("id").to_pylist()) == rows


def test_a_copy_name_of_another_length_is_refused(catalog: SqlCatalog, stack: EmbeddedStack) -> None:
    namespace = ("copies", f"n{uuid.uuid4().hex[:8]}")
    template = create_demo_table(catalog, namespace, "t00000")
    with pytest.raises(ValueError, match="6 characters"):
        copy_table(catalog, template, ["t1"], stack.s3_properties, threads=1)


def test_a_copy_registers_through_a_locked_catalog_database(
    catalog: SqlCatalog,
    stack: EmbeddedStack,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """SQLite's "database is locked", injected on purpose: a seeding of 10^5 tables died of one."""
    namespace = ("copies", f"n{uuid.uuid4().hex[:8]}")
    template = create_demo_table(catalog, namespace, "t00000")
    register = catalog.register_table
    locked = sqlite3.OperationalError("database is locked")
    failures = iter([OperationalError("INSERT INTO iceberg_tables", {}, locked)] * 2)

    def locked_twice(identifier: str | tuple[str, ...], metadata_location: str) -> Table:
        failure = next(failures, None)
        if failure is not None:
            raise failure
        return register(identifier, metadata_location)

    monkeypatch.setattr(catalog, "register_table", locked_twice)
    [location] = copy_table(catalog, template, ["t00001"], stack.s3_properties, threads=1)
    assert catalog.load_table((*namespace, "t00001")).location() == location
    assert capsys.readouterr().err.count("database is locked") == 2


def _namespace_check_steps(order: list[tuple[str, ...]], path: Path, tables: int) -> list[int]:
    """SQLite's VM steps for the namespace check each register_table makes, in each namespace as
    it is seeded in `order`: its first table already there, as after its template."""
    catalog = SqlCatalog("seeding", uri=f"sqlite:///{path}", warehouse=path.parent.as_uri())
    steps = [0]

    def counted() -> int:
        steps[0] += 1
        return 0

    def count_steps(connection: sqlite3.Connection, *_: object) -> None:
        connection.set_progress_handler(counted, 1)

    event.listen(catalog.engine, "checkout", count_steps)
    seen = []
    for namespace in order:
        catalog.create_namespace(namespace)
        name = ".".join(namespace)
        rows = [("seeding", name, f"t{index:05d}", f"{name}/t{index:05d}") for index in range(tables)]
        with closing(sqlite3.connect(path)) as connection:
            connection.executemany(INSERT_TABLE, rows[:1])
            connection.commit()
            steps[0] = 0
            assert catalog.namespace_exists(namespace)
            seen.append(steps[0])
            connection.executemany(INSERT_TABLE, rows[1:])
            connection.commit()
    catalog.engine.dispose()
    return seen


def test_seeding_order_keeps_the_namespace_check_one_row_read(tmp_path: Path) -> None:
    """PyIceberg's check reads the tables in key order up to the namespace's first: in ascending
    order it passes every table seeded before, in seeding_order none."""
    namespaces = [("seed", f"n{index:03d}") for index in range(6)]
    ascending = _namespace_check_steps(sorted(namespaces), tmp_path / "ascending.db", 300)
    seeding = _namespace_check_steps(seeding_order(namespaces), tmp_path / "seeding.db", 300)
    assert ascending[-1] > 10 * ascending[0], ascending
    assert max(seeding) <= 2 * seeding[0], seeding
