"""What Iceberg's CatalogUtil.dropTableData deletes, computed straight from the metadata with
PyIceberg's readers, independently of icepurge's planner."""

from __future__ import annotations

from pyiceberg.io import FileIO
from pyiceberg.manifest import ManifestFile
from pyiceberg.serializers import FromInputFile
from pyiceberg.table.metadata import TableMetadata
from pyiceberg.table.snapshots import Snapshot


def _load(io: FileIO, location: str) -> TableMetadata:
    return FromInputFile.table_metadata(io.new_input(location))


class _Reads:
    """Each manifest list and manifest read once however often the metadata names it: every older
    metadata file names its snapshots' again, so the history sweep of n appends read ~n^2/2 lists
    and ~n^3/6 manifests (280 s for 60 appends on S3)."""

    def __init__(self, io: FileIO) -> None:
        self._io = io
        self._lists: dict[str, list[ManifestFile]] = {}
        self._paths: dict[str, list[str]] = {}

    def manifests(self, snapshot: Snapshot) -> list[ManifestFile]:
        if snapshot.manifest_list not in self._lists:
            self._lists[snapshot.manifest_list] = snapshot.manifests(self._io)
        return self._lists[snapshot.manifest_list]

    def paths(self, manifest: ManifestFile) -> list[str]:
        if manifest.manifest_path not in self._paths:
            entries = manifest.fetch_manifest_entry(self._io, discard_deleted=False)
            self._paths[manifest.manifest_path] = [entry.data_file.file_path for entry in entries]
        return self._paths[manifest.manifest_path]


def _snapshot_files(metadata: TableMetadata, with_content: bool, reads: _Reads) -> set[str]:
    files: set[str] = set()
    for snapshot in metadata.snapshots:
        if snapshot.manifest_list:
            files.add(snapshot.manifest_list)
        for manifest in reads.manifests(snapshot):
            files.add(manifest.manifest_path)
            if with_content:
                files.update(reads.paths(manifest))
    files.update(stat.statistics_path for stat in metadata.statistics)
    files.update(stat.statistics_path for stat in metadata.partition_statistics)
    return files


def drop_table_data_set(io: FileIO, metadata_location: str) -> set[str]:
    """CatalogUtil.dropTableData: every snapshot's manifest list and manifests, every entry
    (DELETED ones too) when gc.enabled, previous metadata files, statistics, current metadata."""
    metadata = _load(io, metadata_location)
    gc_enabled = metadata.properties.get("gc.enabled", "true").lower() != "false"
    files = _snapshot_files(metadata, gc_enabled, _Reads(io))
    files.update(entry.metadata_file for entry in metadata.metadata_log)
    files.add(metadata_location)
    return files


def history_set(io: FileIO, metadata_location: str) -> set[str]:
    """Everything reachable from any older metadata file in the log (the history sweep)."""
    metadata = _load(io, metadata_location)
    reads = _Reads(io)
    files: set[str] = set()
    for entry in metadata.metadata_log:
        older = _load(io, entry.metadata_file)
        files |= _snapshot_files(older, with_content=True, reads=reads)
        files.add(entry.metadata_file)
    return files


def _reachable_manifests(io: FileIO, metadata_location: str) -> list[ManifestFile]:
    """Every distinct manifest reachable from the current and every older metadata file."""
    metadata = _load(io, metadata_location)
    chain = [metadata, *(_load(io, entry.metadata_file) for entry in metadata.metadata_log)]
    reads = _Reads(io)
    manifests = {
        manifest.manifest_path: manifest
        for version in chain
        for snapshot in version.snapshots
        for manifest in reads.manifests(snapshot)
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
