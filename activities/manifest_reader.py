"""Reads manifest lists and manifests (every entry, DELETED ones included, as
CatalogUtil.dropTableData does).

A read is split in two: fetching the bytes, retried through transient faults, and parsing them
in memory. So an I/O fault is never mistaken for a corrupt file, and a parse error always is one.
"""

from __future__ import annotations

import io as std_io
from collections.abc import Callable

from pyiceberg.avro.file import AvroFile
from pyiceberg.io import FileIO, InputFile, InputStream
from pyiceberg.manifest import (
    DEFAULT_READ_VERSION,
    MANIFEST_ENTRY_SCHEMAS,
    DataFile,
    DataFileContent,
    FileFormat,
    ManifestEntry,
    ManifestEntryStatus,
    ManifestFile,
    read_manifest_list,
)

from activities.object_reads import read_object
from activities.plan_model import ContentFile
from activities.read_retry import read_retrying
from workflows.counts import Category

_CATEGORY = {
    DataFileContent.DATA: Category.DATA_FILES,
    DataFileContent.POSITION_DELETES: Category.POSITION_DELETE_FILES,
    DataFileContent.EQUALITY_DELETES: Category.EQUALITY_DELETE_FILES,
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
    try:
        with AvroFile[ManifestEntry](
            _BytesInput(location, data),
            MANIFEST_ENTRY_SCHEMAS[DEFAULT_READ_VERSION],
            read_types={-1: ManifestEntry, 2: DataFile},
            read_enums={0: ManifestEntryStatus, 101: FileFormat, 134: DataFileContent},
        ) as reader:
            return [
                ContentFile(
                    entry.data_file.file_path,
                    _CATEGORY[DataFileContent(entry.data_file.content)],
                    entry.data_file.file_size_in_bytes or 0,
                )
                for entry in reader
            ]
    except Exception as error:
        raise UnparsableFileError(f"{type(error).__name__}: {error}") from None
