"""Builds a purge plan from table metadata: the parity set, the history sweep, the chunks."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field

from pyiceberg.io import FileIO
from pyiceberg.manifest import ManifestFile
from pyiceberg.table.metadata import TableMetadata

from activities.locations import LocationGuard, normalize, parent_dir, table_locations
from activities.metadata_reader import TerminalMetadataError, read_metadata
from activities.plan_model import Plan, PlannedFile, PlannedManifest
from workflows.counts import Category
from workflows.request import PurgeRequest

log = logging.getLogger(__name__)

GC_ENABLED = "gc.enabled"
VERSION_HINT = "version-hint.text"


@dataclass(frozen=True)
class ChunkSizing:
    target_files: int = 5_000
    max_manifests: int = 200


@dataclass
class _Reachable:
    """Files reachable from the metadata, in discovery order, without duplicates."""

    manifests: dict[str, ManifestFile] = field(default_factory=dict)
    manifest_lists: dict[str, None] = field(default_factory=dict)
    statistics: dict[str, None] = field(default_factory=dict)
    metadata: dict[str, None] = field(default_factory=dict)

    def add_snapshots(self, io: FileIO, metadata: TableMetadata, beat: Callable[[], None]) -> None:
        for snapshot in metadata.snapshots:
            if not snapshot.manifest_list or snapshot.manifest_list in self.manifest_lists:
                continue
            self.manifest_lists[snapshot.manifest_list] = None
            beat()
            try:
                manifests = snapshot.manifests(io)
            except FileNotFoundError:
                log.warning("manifest list already gone: %s", snapshot.manifest_list)
                continue
            for manifest in manifests:
                self.manifests.setdefault(manifest.manifest_path, manifest)
        for statistics in [*metadata.statistics, *metadata.partition_statistics]:
            self.statistics[statistics.statistics_path] = None


def build_plan(
    purge_id: str,
    request: PurgeRequest,
    io: FileIO,
    sizing: ChunkSizing,
    beat: Callable[[], None] = lambda: None,
) -> Plan:
    current = read_metadata(io, request.metadata_location)
    reachable = _Reachable()
    reachable.add_snapshots(io, current, beat)
    _walk_metadata_log(io, current, reachable, request.options.history_sweep, beat)
    hint = parent_dir(request.metadata_location) + "/" + VERSION_HINT
    if io.new_input(hint).exists():
        reachable.metadata[hint] = None
    reachable.metadata.pop(request.metadata_location, None)

    guard = LocationGuard(
        table_locations(current.location, current.properties), request.options.location_guard
    )
    foreign: list[PlannedFile] = []

    def owned(paths: dict[str, None], category: Category) -> list[str]:
        kept = []
        for path in paths:
            if guard.allows(path):
                kept.append(path)
            else:
                foreign.append(PlannedFile(path=path, category=category))
        return kept

    manifest_lists = owned(reachable.manifest_lists, Category.MANIFEST_LISTS)
    statistics = owned(reachable.statistics, Category.STATISTICS_FILES)
    previous = owned(reachable.metadata, Category.METADATA_FILES)
    current_file = owned({request.metadata_location: None}, Category.METADATA_FILES)
    manifests = [
        PlannedManifest(
            path=manifest.manifest_path,
            length=manifest.manifest_length,
            file_count=_entry_count(manifest),
            owned=guard.allows(manifest.manifest_path),
        )
        for manifest in reachable.manifests.values()
    ]
    return Plan(
        purge_id=purge_id,
        metadata_location=request.metadata_location,
        gc_enabled=current.properties.get(GC_ENABLED, "true").strip().lower() != "false",
        locations=guard.prefixes,
        chunks=split_into_chunks(manifests, sizing),
        manifest_lists=manifest_lists,
        statistics_files=statistics,
        previous_metadata_files=previous,
        current_metadata_file=current_file[0] if current_file else None,
        foreign_files=foreign,
    )


def _walk_metadata_log(
    io: FileIO, current: TableMetadata, reachable: _Reachable, sweep: bool, beat: Callable[[], None]
) -> None:
    """Older metadata files, and older ones still reachable from their own logs (as Iceberg's
    Spark action does); with the sweep, their snapshots' files too."""
    pending = [entry.metadata_file for entry in current.metadata_log]
    seen = {normalize(path) for path in pending}
    while pending:
        location = pending.pop(0)
        reachable.metadata[location] = None
        beat()
        try:
            older = read_metadata(io, location)
        except (TerminalMetadataError, OSError) as error:
            log.info(
                "older metadata file not readable, only deleted: %s (%s)", location, type(error).__name__
            )
            continue
        for entry in older.metadata_log:
            if normalize(entry.metadata_file) not in seen:
                seen.add(normalize(entry.metadata_file))
                pending.append(entry.metadata_file)
        if sweep:
            reachable.add_snapshots(io, older, beat)


def _entry_count(manifest: ManifestFile) -> int:
    counts = (manifest.added_files_count, manifest.existing_files_count, manifest.deleted_files_count)
    if any(count is None for count in counts):
        return 1
    return sum(count or 0 for count in counts)


def split_into_chunks(manifests: list[PlannedManifest], sizing: ChunkSizing) -> list[list[PlannedManifest]]:
    chunks: list[list[PlannedManifest]] = []
    current: list[PlannedManifest] = []
    files = 0
    for manifest in manifests:
        if current and (
            files + manifest.file_count > sizing.target_files or len(current) >= sizing.max_manifests
        ):
            chunks.append(current)
            current, files = [], 0
        current.append(manifest)
        files += manifest.file_count
    if current:
        chunks.append(current)
    return chunks
