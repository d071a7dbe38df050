"""Manifests and manifest lists decoded by fastavro list exactly what PyIceberg's own reader lists
(every entry, deleted ones included, with its content kind and size; every manifest with its
length and entry counts), in format v1 and v2 and as Java names v1's fields, and a file that isn't
Avro is unparsable, never empty."""

from __future__ import annotations

from pathlib import Path

import fastavro
import pyarrow as pa
import pytest
from pyiceberg.catalog.sql import SqlCatalog
from pyiceberg.io import PY_IO_IMPL, load_file_io
from pyiceberg.manifest import DataFileContent, read_manifest_list
from pyiceberg.table import Table

from icepurge.activities.plan.manifest_reader import (
    ListedManifest,
    UnparsableFileError,
    parse_manifest_entries,
    parse_manifest_list,
)
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


def _listed_as_pyiceberg_reads_them(location: str) -> list[ListedManifest]:
    counted = []
    for manifest in read_manifest_list(
        load_file_io({PY_IO_IMPL: "pyiceberg.io.pyarrow.PyArrowFileIO"}).new_input(location)
    ):
        counts = (manifest.added_files_count, manifest.existing_files_count, manifest.deleted_files_count)
        entries = 1 if None in counts else sum(count or 0 for count in counts)
        counted.append(ListedManifest(manifest.manifest_path, manifest.manifest_length, entries))
    return counted


@pytest.mark.parametrize("format_version", ["1", "2"])
def test_every_manifest_list_is_read_as_pyiceberg_reads_it(tmp_path: Path, format_version: str) -> None:
    catalog = _catalog(tmp_path)
    table = catalog.create_table(
        "reader.lists", pa.schema([pa.field("id", pa.int64())]), properties={"format-version": format_version}
    )
    for batch in range(3):
        table.append(pa.table({"id": pa.array(range(batch * 10, batch * 10 + 10), pa.int64())}))
    table.overwrite(pa.table({"id": pa.array([7], pa.int64())}))

    counted: set[int] = set()
    for snapshot in table.snapshots():
        assert snapshot.manifest_list is not None
        listed = parse_manifest_list(
            snapshot.manifest_list, table.io.new_input(snapshot.manifest_list).open().read()
        )
        assert listed == _listed_as_pyiceberg_reads_them(snapshot.manifest_list)
        assert listed and all(manifest.length > 0 for manifest in listed)
        counted.update(manifest.entries for manifest in listed)
    # The overwrite's manifest lists the three files it deleted.
    assert max(counted) == 3


def _field(field_id: int, name: str, kind: object) -> dict[str, object]:
    return {"name": name, "type": kind, "field-id": field_id}


def test_a_manifest_list_with_javas_v1_field_names_is_counted_by_field_id(tmp_path: Path) -> None:
    """Java's format v1 writers name the counts `added_data_files_count` and so on; a list
    without them (optional in v1) counts each manifest as one entry."""
    counts = [
        _field(504, "added_data_files_count", ["null", "int"]),
        _field(505, "existing_data_files_count", ["null", "int"]),
        _field(506, "deleted_data_files_count", ["null", "int"]),
    ]
    schema = {
        "type": "record",
        "name": "manifest_file",
        "fields": [
            _field(500, "manifest_path", "string"),
            _field(501, "manifest_length", "long"),
            _field(502, "partition_spec_id", "int"),
            _field(503, "added_snapshot_id", ["null", "long"]),
            *counts,
            _field(512, "added_rows_count", ["null", "long"]),
            _field(513, "existing_rows_count", ["null", "long"]),
            _field(514, "deleted_rows_count", ["null", "long"]),
        ],
    }
    rows_counted = {"added_rows_count": 10, "existing_rows_count": 0, "deleted_rows_count": 0}
    rows = [
        {
            "manifest_path": "s3://b/t/metadata/a-m0.avro",
            "manifest_length": 4321,
            "partition_spec_id": 0,
            "added_snapshot_id": 1,
            "added_data_files_count": 2,
            "existing_data_files_count": 3,
            "deleted_data_files_count": 1,
            **rows_counted,
        },
        {
            "manifest_path": "s3://b/t/metadata/b-m0.avro",
            "manifest_length": 99,
            "partition_spec_id": 0,
            "added_snapshot_id": 1,
            "added_data_files_count": None,
            "existing_data_files_count": 3,
            "deleted_data_files_count": 0,
            **rows_counted,
        },
    ]
    location = tmp_path / "snap-1.avro"
    with location.open("wb") as out:
        fastavro.writer(out, fastavro.parse_schema(schema), rows)

    listed = parse_manifest_list(location.as_uri(), location.read_bytes())

    assert listed == [
        ListedManifest("s3://b/t/metadata/a-m0.avro", 4321, 6),
        ListedManifest("s3://b/t/metadata/b-m0.avro", 99, 1),
    ]
    assert listed == _listed_as_pyiceberg_reads_them(location.as_uri())


def test_a_manifest_list_that_is_not_avro_is_unparsable() -> None:
    with pytest.raises(UnparsableFileError):
        parse_manifest_list("s3://b/t/metadata/snap-1.avro", b"this is not an avro file")
