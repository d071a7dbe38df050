"""Reads manifest lists and manifests (every entry, DELETED ones included, as
CatalogUtil.dropTableData does).

A read is split in two: fetching the bytes, retried through transient faults, and parsing them
in memory. So an I/O fault is never mistaken for a corrupt file, and a parse error always is one.
"""

from __future__ import annotations

import io as std_io
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from fastavro import reader as avro_reader
from pyiceberg.io import FileIO
from pyiceberg.manifest import DataFileContent

from icepurge.activities.plan.object_reads import read_object
from icepurge.activities.plan.plan_model import ContentFile
from icepurge.activities.plan.read_retry import read_retrying
from icepurge.contract.counts import Category

# A manifest entry's status: 0 EXISTING, 1 ADDED, 2 DELETED.
_DELETED = 2
# A manifest list's added, existing and deleted entry counts.
_COUNT_FIELD_IDS = (504, 505, 506)
# By the entry's `content` (absent in format v1, whose files are all data).
_CATEGORY = {
    DataFileContent.DATA.value: Category.DATA_FILES,
    DataFileContent.POSITION_DELETES.value: Category.POSITION_DELETE_FILES,
    DataFileContent.EQUALITY_DELETES.value: Category.EQUALITY_DELETE_FILES,
}


class UnparsableFileError(Exception):
    """The file was read whole but is not a valid Avro manifest or manifest list."""


def fetch(io: FileIO, location: str, beat: Callable[[], None] = lambda: None) -> bytes:
    """The file's bytes; raises FileNotFoundError only when the store says it is absent."""

    return read_retrying(lambda: read_object(io, location), location, beat)


@dataclass(frozen=True)
class ListedManifest:
    """What planning needs of a manifest list's entry."""

    path: str
    length: int
    # Its entries, added, existing and deleted; 1 where the writer left a count out (format v1).
    entries: int


def parse_manifest_list(location: str, data: bytes) -> list[ListedManifest]:
    """Decoded by fastavro's C reader, as manifests are: PyIceberg's reader converts the file's
    Avro schema to an Iceberg schema and resolves a reader tree for every manifest list, most of
    a small table's planning CPU. Counts are found by their field ids, as PyIceberg reads them:
    Java's format v1 writers name them `added_data_files_count` and so on."""
    try:
        decoded = avro_reader(std_io.BytesIO(data))
        counts = _count_fields(decoded.writer_schema)
        records: Iterable[Any] = decoded
        return [
            ListedManifest(record["manifest_path"], record["manifest_length"], _entries(record, counts))
            for record in records
        ]
    except Exception as error:
        raise UnparsableFileError(f"{type(error).__name__}: {error}") from None


def _count_fields(schema: Any) -> list[str | None]:
    """The names of fields 504, 505 and 506 (added, existing, deleted entries) in the writer's
    schema; None for a field it doesn't have."""
    by_id = {field.get("field-id"): field["name"] for field in schema["fields"]}
    return [by_id.get(field_id) for field_id in _COUNT_FIELD_IDS]


def _entries(record: dict[str, Any], counts: list[str | None]) -> int:
    values: list[int | None] = [record.get(name) if name else None for name in counts]
    return sum(value for value in values if value is not None) if None not in values else 1


def parse_manifest_entries(location: str, data: bytes) -> list[ContentFile]:
    """Every entry's file. Decoded by fastavro's C reader into plain records: PyIceberg's readers
    build a typed object per entry and field, and took most of planning's CPU (BENCHMARKS.md).

    A DELETED entry's file is marked unsure: an expiry that cleans up (Spark's expire_snapshots)
    removes the files no retained snapshot holds live, while a kept manifest may still list them
    as deleted. Planning reads the snapshots oldest first, so a file some snapshot still holds is
    usually met live before it is met deleted."""
    try:
        entries: Iterable[Any] = avro_reader(std_io.BytesIO(data))
        return [
            ContentFile(
                file["file_path"],
                _CATEGORY[file.get("content", 0)],
                file["file_size_in_bytes"] or 0,
                entry["status"] == _DELETED,
            )
            for entry in entries
            for file in (entry["data_file"],)
        ]
    except Exception as error:
        raise UnparsableFileError(f"{type(error).__name__}: {error}") from None
