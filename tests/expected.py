"""What Iceberg's CatalogUtil.dropTableData deletes, computed straight from the metadata with
PyIceberg's readers, independently of icepurge's planner."""

from __future__ import annotations

from pyiceberg.io import FileIO
from pyiceberg.manifest import ManifestFile
from pyiceberg.serializers import FromInputFile
from pyiceberg.table.metadata import TableMetadata


def _load(io: FileIO, location: str) -> TableMetadata:
    return FromInputFile.table_metadata(io.new_input(location))


def _snapshot_files(io: FileIO, metadata: TableMetadata, with_content: bool) -> set[str]:
    files: set[str] = set()
    for snapshot in metadata.snapshots:
        if snapshot.manifest_list:
            files.add(snapshot.manifest_list)
        for manifest in snapshot.manifests(io):
            files.add(manifest.manifest_path)
            if with_content:
                for entry in manifest.fetch_manifest_entry(io, discard_deleted=False):
                    files.add(entry.data_file.file_path)
    files.update(stat.statistics_path for stat in metadata.statistics)
    files.update(stat.statistics_path for stat in metadata.partition_statistics)
    return files


def drop_table_data_set(io: FileIO, metadata_location: str) -> set[str]:
    """CatalogUtil.dropTableData: every snapshot's manifest list and manifests, every entry
    (DELETED ones too) when gc.enabled, previous metadata files, statistics, current metadata."""
    metadata = _load(io, metadata_location)
    gc_enabled = metadata.properties.get("gc.enabled", "true").lower() != "false"
    files = _snapshot_files(io, metadata, gc_enabled)
    files.update(entry.metadata_file for entry in metadata.metadata_log)
    files.add(metadata_location)
    return files


def history_set(io: FileIO, metadata_location: str) -> set[str]:
    """Everything reachable from any older metadata file in the log (the history sweep)."""
    metadata = _load(io, metadata_location)
    files: set[str] = set()
    for entry in metadata.metadata_log:
        older = _load(io, entry.metadata_file)
        files |= _snapshot_files(io, older, with_content=True)
        files.add(entry.metadata_file)
    return files


def _reachable_manifests(io: FileIO, metadata_location: str) -> list[ManifestFile]:
    """Every distinct manifest reachable from the current and every older metadata file."""
    metadata = _load(io, metadata_location)
    chain = [metadata, *(_load(io, entry.metadata_file) for entry in metadata.metadata_log)]
    manifests = {
        manifest.manifest_path: manifest
        for version in chain
        for snapshot in version.snapshots
        for manifest in snapshot.manifests(io)
    }
    return list(manifests.values())


def content_listings(io: FileIO, metadata_location: str) -> list[tuple[str, int]]:
    """Every manifest entry (path, size) within the history sweep's reach, once per distinct
    manifest: listings, not files."""
    return [
        (entry.data_file.file_path, entry.data_file.file_size_in_bytes)
        for manifest in _reachable_manifests(io, metadata_location)
        for entry in manifest.fetch_manifest_entry(io, discard_deleted=False)
    ]


def manifest_contents(io: FileIO, metadata_location: str) -> dict[str, set[str]]:
    """Each reachable manifest's content files: none of them may be deleted after it."""
    return {
        manifest.manifest_path: {
            entry.data_file.file_path for entry in manifest.fetch_manifest_entry(io, discard_deleted=False)
        }
        for manifest in _reachable_manifests(io, metadata_location)
    }
