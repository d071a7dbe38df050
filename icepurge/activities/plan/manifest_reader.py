"""Reads manifest lists and manifests (every entry, DELETED ones included, as
CatalogUtil.dropTableData does).

A read is split in two: fetching the bytes, retried through transient faults, and parsing them
in memory. So an I/O fault is never mistaken for a corrupt file, and a parse error always is one.
"""

from __future__ import annotations

import io as std_io
from collections.abc import Callable, Iterable
from typing import Any

from fastavro import reader as avro_reader
from pyiceberg.io import FileIO, InputFile, InputStream
from pyiceberg.manifest import DataFileContent, ManifestFile, read_manifest_list

from icepurge.activities.plan.object_reads import read_object
from icepurge.activities.plan.plan_model import ContentFile
from icepurge.activities.plan.read_retry import read_retrying
from icepurge.contract.counts import Category

# A manifest entry's status: 0 EXISTING, 1 ADDED, 2 DELETED.
_DELETED = 2
# By the entry's `content` (absent in format v1, whose files are all data).
_CATEGORY = {
    DataFileContent.DATA.value: Category.DATA_FILES,
    DataFileContent.POSITION_DELETES.value: Category.POSITION_DELETE_FILES,
    DataFileContent.EQUALITY_DELETES.value: Category.EQUALITY_DELETE_FILES,
}


class UnparsableFileError(Exception):
    """The file was read whole but is not a valid Avro manifest or manifest list."""


class _BytesInput(InputFile):
    def __init__(self, location: str, data: bytes) -> None:
        super().__init__(location)
        self._data = data

    def __len__(self) -> int:
        return len(self._data)

    def exists(self) -> bool:
        return True

    def open(self, seekable: bool = True) -> InputStream:
        return std_io.BytesIO(self._data)


def fetch(io: FileIO, location: str, beat: Callable[[], None] = lambda: None) -> bytes:
    """The file's bytes; raises FileNotFoundError only when the store says it is absent."""

    return read_retrying(lambda: read_object(io, location), location, beat)


def parse_manifest_list(location: str, data: bytes) -> list[ManifestFile]:
    try:
        return list(read_manifest_list(_BytesInput(location, data)))
    except Exception as error:
        raise UnparsableFileError(f"{type(error).__name__}: {error}") from None


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
