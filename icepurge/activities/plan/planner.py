"""Builds a purge plan from table metadata: the parity set, the history sweep, and the table's
distinct content files split into chunk objects."""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from functools import partial
from itertools import islice
from typing import TypeVar

from pydantic import BaseModel, ConfigDict, Field
from pyiceberg.io import FileIO
from pyiceberg.manifest import ManifestFile
from pyiceberg.table.metadata import TableMetadata

from icepurge.activities.plan.chunk_output import ChunkOutput
from icepurge.activities.plan.content_partitions import ContentPartitioner
from icepurge.activities.plan.early_chunks import EarlyChunks, EarlyPacing
from icepurge.activities.plan.manifest_reader import (
    UnparsableFileError,
    fetch,
    parse_manifest_entries,
    parse_manifest_list,
)
from icepurge.activities.plan.metadata_reader import TerminalMetadataError, parse_metadata, read_bytes
from icepurge.activities.plan.plan_model import (
    ChunkContext,
    Plan,
    PlanCheckpoint,
    PlannedFile,
    UnreadableFile,
    UnreadableReason,
    context_uri,
    reach_uri,
)
from icepurge.activities.plan.read_retry import read_retrying
from icepurge.catalogs.locations import LocationGuard, parent_dir, table_locations
from icepurge.contract.counts import Category
from icepurge.contract.names import (
    ERROR_METADATA_CORRUPT,
    ERROR_METADATA_NOT_FOUND,
    ERROR_UNSUPPORTED_FORMAT,
)
from icepurge.contract.request import PurgeRequest
from icepurge.state.state_store import StateStore
from icepurge.stores.addresses import normalize

log = logging.getLogger(__name__)
T = TypeVar("T")

GC_ENABLED = "gc.enabled"
VERSION_HINT = "version-hint.text"
# How long a wait for a manifest read may go without a heartbeat.
_BEAT_SECONDS = 1.0


@dataclass(frozen=True)
class ChunkSizing:
    target_files: int = 5_000
    # Distinct content files planning holds in memory before it spills buckets to the state location.
    memory_files: int = 500_000
    # Manifests read at once while planning.
    readers: int = 8
    # Deletes start while planning only when it projects at least this long still to read: on a
    # 2-core host sharing the store, overlapping a shorter rest cost more CPU than it hid
    # (BENCHMARKS.md, "Deleting while planning").
    overlap_min_seconds: float = 0.5
    # Planning spills what it has read and checkpoints after this many manifests or manifest
    # entries (a few seconds of reading here), whichever comes first. Counted, not timed, so that
    # every attempt of a plan cuts the same chunks and spills the same parts, whatever its pace
    # (see `_enumerate_content`).
    checkpoint_manifests: int = 500
    checkpoint_entries: int = 200_000


class ReachableFiles(BaseModel):
    """Files reachable from the metadata, in discovery order, without duplicates; saved beside
    the plan once found, so a retried planning attempt does not walk the metadata again."""

    model_config = ConfigDict(extra="forbid")

    manifests: dict[str, int] = Field(default_factory=dict, description="Path: entries it lists.")
    manifest_lists: dict[str, None] = Field(default_factory=dict)
    statistics: dict[str, None] = Field(default_factory=dict)
    metadata: dict[str, None] = Field(default_factory=dict)
    unreadable: list[UnreadableFile] = Field(default_factory=list)
    sizes: dict[str, int] = Field(
        default_factory=dict,
        description="Bytes of the metadata-side files: read (lists, metadata files) or recorded "
        "where they are listed (a manifest's length, a statistics file's size).",
    )

    def add_snapshots(self, reads: OrderedReads, metadata: TableMetadata) -> None:
        fresh = [
            snapshot.manifest_list
            for snapshot in metadata.snapshots
            if snapshot.manifest_list and snapshot.manifest_list not in self.manifest_lists
        ]
        for location in fresh:
            self.manifest_lists[location] = None
        for location, read in reads.in_order(reads.fetch, list(dict.fromkeys(fresh))):
            try:
                raw = read()
                self.sizes[location] = len(raw)
                manifests = parse_manifest_list(location, raw)
            except FileNotFoundError:
                self.unreadable.append(
                    _unreadable(location, Category.MANIFEST_LISTS, UnreadableReason.MISSING)
                )
                continue
            except UnparsableFileError as error:
                self.unreadable.append(
                    _unreadable(location, Category.MANIFEST_LISTS, UnreadableReason.CORRUPT, str(error))
                )
                continue
            for manifest in manifests:
                self.manifests.setdefault(manifest.manifest_path, _entry_count(manifest))
                self.sizes.setdefault(manifest.manifest_path, manifest.manifest_length)
        for statistics in [*metadata.statistics, *metadata.partition_statistics]:
            self.statistics[statistics.statistics_path] = None
            self.sizes[statistics.statistics_path] = statistics.file_size_in_bytes


class OrderedReads:
    """Many files read at once on a bounded pool, handed back in the order asked: a walk over
    the metadata costs the slowest reads of a window, not the sum of every read. The activity's
    thread heartbeats while it waits (the pool's threads can't)."""

    def __init__(self, io: FileIO, pool: ThreadPoolExecutor, window: int, beat: Callable[[], None]) -> None:
        self._io = io
        self._pool = pool
        self._window = window
        self._beat = beat

    def fetch(self, location: str) -> bytes:
        return fetch(self._io, location)

    def metadata(self, location: str) -> tuple[TableMetadata, int]:
        """The metadata file and its size in bytes."""
        raw = read_bytes(self._io, location)
        return parse_metadata(raw, location), len(raw)

    def in_order(
        self, read: Callable[[str], T], locations: Iterable[str]
    ) -> Iterator[tuple[str, Callable[[], T]]]:
        """(location, its result): the result raises what the read raised."""
        upcoming = iter(locations)
        pending: deque[tuple[str, Future[T]]] = deque()
        for location in islice(upcoming, self._window):
            pending.append((location, self._pool.submit(read, location)))
        while pending:
            location, future = pending.popleft()
            following = next(upcoming, None)
            if following is not None:
                pending.append((following, self._pool.submit(read, following)))
            yield location, partial(_result, future, self._beat)
            self._beat()


def _unreadable(path: str, category: Category, reason: UnreadableReason, detail: str = "") -> UnreadableFile:
    log.warning("%s %s skipped while planning: %s", reason.value, category.value, path)
    return UnreadableFile(path=path, category=category, reason=reason, detail=detail)


class _Heartbeat:
    """Every heartbeat carries the latest checkpoint: one without details would erase it."""

    def __init__(self, checkpoint: PlanCheckpoint, send: Callable[[PlanCheckpoint], None]) -> None:
        self.checkpoint = checkpoint
        self._send = send

    def __call__(self) -> None:
        self._send(self.checkpoint)

    def save(self, checkpoint: PlanCheckpoint) -> None:
        self.checkpoint = checkpoint
        self._send(checkpoint)


@dataclass(frozen=True)
class PlanBuild:
    """One plan to build: its purge and table, where it goes, and whom it tells as it goes."""

    purge_id: str
    request: PurgeRequest
    io: FileIO
    state: StateStore
    plan_uri: str
    sizing: ChunkSizing
    checkpoint: PlanCheckpoint | None = None
    heartbeat: Callable[[PlanCheckpoint], None] = lambda _: None
    announce: Callable[[ReadyChunks], None] = lambda _: None


def build_plan(build: PlanBuild) -> Plan:
    """Reads the metadata, writes the content chunk objects beside `plan_uri` and returns the
    plan (which the caller writes at `plan_uri`), resuming from `checkpoint`. When the entries fit
    the memory budget, chunks are handed out (`announce`) as they are written, before the plan."""
    request, io, state, plan_uri = build.request, build.io, build.state, build.plan_uri
    beat = _Heartbeat(build.checkpoint or PlanCheckpoint(), build.heartbeat)
    current_raw = read_bytes(io, request.snapshot_location(), beat)
    current = parse_metadata(current_raw, request.snapshot_location())
    guard = LocationGuard(
        table_locations(current.location, current.properties), request.options.location_guard
    )
    context = ChunkContext(
        purge_id=build.purge_id,
        gc_enabled=current.properties.get(GC_ENABLED, "true").strip().lower() != "false",
        locations=guard.prefixes,
    )
    state.write(context_uri(plan_uri), context)
    saved = state.read(reach_uri(plan_uri)) if beat.checkpoint.reach_saved else None
    if saved is None:
        reachable = reach(io, current, request, build.sizing.readers, beat)
        state.write(reach_uri(plan_uri), reachable, compress=True)
        beat.save(PlanCheckpoint(reach_saved=True))
    else:
        reachable = ReachableFiles.model_validate_json(saved)

    entries = sum(reachable.manifests.values())
    chunks = _chunk_cutter(
        build,
        beat,
        list(reachable.manifests.values()),
        lambda ready: build.announce(ReadyChunks(plan_uri, ready, entries, context)),
    )
    unreadable_manifests = _enumerate_content(
        io, reachable.manifests, chunks=chunks, sizing=build.sizing, beat=beat
    )
    content = chunks.finish()
    state.delete(reach_uri(plan_uri))

    foreign: list[PlannedFile] = []

    def owned(paths: dict[str, None] | dict[str, int], category: Category) -> list[str]:
        kept = []
        for path in paths:
            if guard.allows(path):
                kept.append(path)
            else:
                foreign.append(PlannedFile(path=path, category=category))
        return kept

    manifests = owned(reachable.manifests, Category.MANIFESTS)
    manifest_lists = owned(reachable.manifest_lists, Category.MANIFEST_LISTS)
    statistics = owned(reachable.statistics, Category.STATISTICS_FILES)
    previous = owned(reachable.metadata, Category.METADATA_FILES)
    current_file = owned({request.snapshot_location(): None}, Category.METADATA_FILES)
    return Plan(
        purge_id=build.purge_id,
        metadata_location=request.snapshot_location(),
        gc_enabled=context.gc_enabled,
        locations=context.locations,
        content_entries=entries,
        content_chunks=content.chunk_sizes,
        content_by_category=content.by_category,
        manifests=manifests,
        manifest_lists=manifest_lists,
        statistics_files=statistics,
        previous_metadata_files=previous,
        current_metadata_file=current_file[0] if current_file else None,
        foreign_files=foreign,
        unreadable=[*reachable.unreadable, *unreadable_manifests],
        sizes={**reachable.sizes, request.snapshot_location(): len(current_raw)},
        spill=content.spill,
    )


@dataclass(frozen=True)
class ReadyChunks:
    """Chunk objects [0, chunks) are written and recorded: they may start deleting."""

    plan_location: str
    chunks: int
    content_entries: int
    context: ChunkContext


def _chunk_cutter(
    build: PlanBuild, beat: _Heartbeat, manifest_entries: list[int], announce: Callable[[int], None]
) -> EarlyChunks | ContentPartitioner:
    """Early chunks while the seen paths fit the budget; above it, hashed buckets, spilled and
    merged at the end (no chunk exists before every manifest is read)."""
    sizing = build.sizing
    output = ChunkOutput(build.state, build.plan_uri, beat)
    entries = sum(manifest_entries)
    if entries <= sizing.memory_files:
        return EarlyChunks(
            output,
            chunk_files=sizing.target_files,
            announce=announce,
            manifest_entries=manifest_entries,
            pacing=EarlyPacing(
                last_pieces=build.request.options.chunk_window, overlap_min_seconds=sizing.overlap_min_seconds
            ),
        )
    return ContentPartitioner(
        output,
        expected_entries=entries,
        memory_files=sizing.memory_files,
        chunk_files=sizing.target_files,
        resumed=beat.checkpoint,
    )


def reach(
    io: FileIO, current: TableMetadata, request: PurgeRequest, readers: int, beat: Callable[[], None]
) -> ReachableFiles:
    """Every file the purge reaches besides content files: the manifest lists and manifests it
    reads, older metadata files (read) and the version hint (only looked for)."""
    reachable = ReachableFiles()
    with ThreadPoolExecutor(readers, thread_name_prefix="icepurge-plan-walk") as pool:
        reads = OrderedReads(io, pool, 2 * readers, beat)
        reachable.add_snapshots(reads, current)
        _walk_metadata_log(reads, current, reachable, request.options.history_sweep)
    hint = parent_dir(request.snapshot_location()) + "/" + VERSION_HINT
    if read_retrying(io.new_input(hint).exists, hint, beat):
        reachable.metadata[hint] = None
    reachable.metadata.pop(request.snapshot_location(), None)
    return reachable


def _walk_metadata_log(
    reads: OrderedReads, current: TableMetadata, reachable: ReachableFiles, sweep: bool
) -> None:
    """Older metadata files, and older ones still reachable from their own logs (as Iceberg's
    Spark action does); with the sweep, their snapshots' files too. Breadth first, a level of
    the logs read at once.

    A transient fault is retried (and then fails the attempt) rather than skipped: deleting a
    metadata file whose snapshots were never swept would leak their files for good."""
    level = [entry.metadata_file for entry in current.metadata_log]
    seen = {normalize(path) for path in level}
    while level:
        following: list[str] = []
        for location, read in reads.in_order(reads.metadata, level):
            reachable.metadata[location] = None
            try:
                older, reachable.sizes[location] = read()
            except TerminalMetadataError as error:
                reason = _UNREADABLE_METADATA.get(error.type or "")
                if reason is None:
                    raise
                reachable.unreadable.append(
                    _unreadable(location, Category.METADATA_FILES, reason, str(error))
                )
                continue
            for entry in older.metadata_log:
                if normalize(entry.metadata_file) not in seen:
                    seen.add(normalize(entry.metadata_file))
                    following.append(entry.metadata_file)
            if sweep:
                reachable.add_snapshots(reads, older)
        level = following


_UNREADABLE_METADATA = {
    ERROR_METADATA_NOT_FOUND: UnreadableReason.MISSING,
    ERROR_METADATA_CORRUPT: UnreadableReason.CORRUPT,
    ERROR_UNSUPPORTED_FORMAT: UnreadableReason.CORRUPT,
}


def _enumerate_content(
    io: FileIO,
    manifests: dict[str, int],
    *,
    chunks: EarlyChunks | ContentPartitioner,
    sizing: ChunkSizing,
    beat: _Heartbeat,
) -> list[UnreadableFile]:
    """Reads every manifest (path: the entries its manifest list records) from where an earlier
    attempt stopped, a bounded window at a time, in order, into `chunks`, which checkpoint every
    `sizing.checkpoint_manifests` or `checkpoint_entries`. Returns the manifests found absent or
    corrupt (the earlier attempts' included).

    Where chunks are cut and parts spilled depends on the manifests alone, never on the clock: an
    attempt cut off but still running (a frozen process, thawed) and its retry, resumed from the
    same checkpoint, write the same objects under the same names. The one write such an attempt
    may land past its fence (icepurge.state.attempt_fence) then writes what its retry writes too."""
    first = chunks.resumed.manifests_done
    unreadable = list(chunks.resumed.unreadable)
    paths, entries = list(manifests), list(manifests.values())
    entries_since = manifests_since = 0
    with ThreadPoolExecutor(sizing.readers, thread_name_prefix="icepurge-plan-read") as pool:
        reads = OrderedReads(io, pool, 2 * sizing.readers, beat)
        for index, (path, read) in enumerate(reads.in_order(reads.fetch, paths[first:]), start=first):
            try:
                chunks.add(parse_manifest_entries(path, read()))
            except FileNotFoundError:
                unreadable.append(_unreadable(path, Category.MANIFESTS, UnreadableReason.MISSING))
            except UnparsableFileError as error:
                unreadable.append(_unreadable(path, Category.MANIFESTS, UnreadableReason.CORRUPT, str(error)))
            entries_since += entries[index]
            manifests_since += 1
            due = entries_since >= sizing.checkpoint_entries or manifests_since >= sizing.checkpoint_manifests
            checkpoint = chunks.boundary(index + 1, unreadable, due)
            if checkpoint is not None:
                beat.save(checkpoint)
                entries_since = manifests_since = 0
    return unreadable


def _result(read: Future[T], beat: Callable[[], None]) -> T:
    while True:
        try:
            return read.result(timeout=_BEAT_SECONDS)
        except TimeoutError:
            beat()


def _entry_count(manifest: ManifestFile) -> int:
    counts = (manifest.added_files_count, manifest.existing_files_count, manifest.deleted_files_count)
    if any(count is None for count in counts):
        return 1
    return sum(count or 0 for count in counts)
