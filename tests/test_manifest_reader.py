"""Manifests decoded by fastavro list exactly what PyIceberg's own reader lists (every entry,
deleted ones included, with its content kind and size), in format v1 and v2, and a manifest that
isn't Avro is unparsable, never empty."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest
from pyiceberg.catalog.sql import SqlCatalog
from pyiceberg.manifest import DataFileContent
from pyiceberg.table import Table

from icepurge.activities.plan.manifest_reader import UnparsableFileError, parse_manifest_entries
from icepurge.contract.counts import Category
from icepurge.devstack.synthetic_table import TableShape, synthetic_table

KINDS = {
    DataFileContent.DATA: Category.DATA_FILES,
    DataFileContent.POSITION_DELETES: Category.POSITION_DELETE_FILES,
    DataFileContent.EQUALITY_DELETES: Category.EQUALITY_DELETE_FILES,
}


def _catalog(tmp_path: Path) -> SqlCatalog:
    catalog = SqlCatalog("local", uri=f"sqlite:///{tmp_path}/catalog.db", warehouse=tmp_path.as_uri())
    catalog.create_namespace("reader")
    return catalog


def _as_pyiceberg_reads_them(table: Table) -> list[tuple[str, Category, int]]:
    entries: list[tuple[str, Category, int]] = []
    for snapshot in table.snapshots():
        for manifest in snapshot.manifests(table.io):
            for entry in manifest.fetch_manifest_entry(table.io, discard_deleted=False):
                data_file = entry.data_file
                entries.append((data_file.file_path, KINDS[data_file.content], data_file.file_size_in_bytes))
    return entries


def _as_planning_reads_them(table: Table) -> list[tuple[str, Category, int]]:
    entries: list[tuple[str, Category, int]] = []
    for snapshot in table.snapshots():
        for manifest in snapshot.manifests(table.io):
            data = table.io.new_input(manifest.manifest_path).open().read()
            parsed = parse_manifest_entries(manifest.manifest_path, data)
            entries.extend((file.path, file.category, file.size) for file in parsed)
    return entries


@pytest.mark.parametrize("format_version", ["1", "2"])
def test_every_entry_is_read_as_pyiceberg_reads_it(tmp_path: Path, format_version: str) -> None:
    catalog = _catalog(tmp_path)
    table = catalog.create_table(
        "reader.rows",
        pa.schema([pa.field("id", pa.int64())]),
        properties={"format-version": format_version},
    )
    for batch in range(3):
        table.append(pa.table({"id": pa.array(range(batch * 10, batch * 10 + 10), pa.int64())}))
    table.overwrite(pa.table({"id": pa.array([7], pa.int64())}))

    planned = _as_planning_reads_them(table)

    assert planned == _as_pyiceberg_reads_them(table)
    assert len(planned) > len({path for path, _, _ in planned}), "the overwrite lists deleted entries too"


def test_delete_files_keep_their_kind(tmp_path: Path) -> None:
    shape = TableShape(manifests=3, files_per_manifest=4, snapshots=2, delete_files_per_snapshot=2)
    table = synthetic_table(_catalog(tmp_path), ("reader", "deletes"), shape)

    planned = _as_planning_reads_them(table)

    assert planned == _as_pyiceberg_reads_them(table)
    assert len({path for path, kind, _ in planned if kind is Category.POSITION_DELETE_FILES}) == 4


def test_a_manifest_that_is_not_avro_is_unparsable() -> None:
    with pytest.raises(UnparsableFileError):
        parse_manifest_entries("s3://b/t/metadata/broken-m0.avro", b"this is not an avro file")
