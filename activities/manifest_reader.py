"""Lists every entry of a manifest, DELETED ones included, as CatalogUtil.dropTableData does."""

from __future__ import annotations

from dataclasses import dataclass

from pyiceberg.avro.file import AvroFile
from pyiceberg.io import FileIO
from pyiceberg.manifest import (
    DEFAULT_READ_VERSION,
    MANIFEST_ENTRY_SCHEMAS,
    DataFile,
    DataFileContent,
    FileFormat,
    ManifestEntry,
    ManifestEntryStatus,
)

from workflows.counts import Category

_CATEGORY = {
    DataFileContent.DATA: Category.DATA_FILES,
    DataFileContent.POSITION_DELETES: Category.POSITION_DELETE_FILES,
    DataFileContent.EQUALITY_DELETES: Category.EQUALITY_DELETE_FILES,
}


@dataclass(frozen=True)
class ContentFile:
    path: str
    category: Category
    size: int


def read_manifest_entries(io: FileIO, manifest_path: str) -> list[ContentFile]:
    """Raises FileNotFoundError when the manifest is already gone."""
    with AvroFile[ManifestEntry](
        io.new_input(manifest_path),
        MANIFEST_ENTRY_SCHEMAS[DEFAULT_READ_VERSION],
        read_types={-1: ManifestEntry, 2: DataFile},
        read_enums={0: ManifestEntryStatus, 101: FileFormat, 134: DataFileContent},
    ) as reader:
        return [
            ContentFile(
                path=entry.data_file.file_path,
                category=_CATEGORY[DataFileContent(entry.data_file.content)],
                size=entry.data_file.file_size_in_bytes or 0,
            )
            for entry in reader
        ]
