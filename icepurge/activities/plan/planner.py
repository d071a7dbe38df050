"""Builds a purge plan from table metadata: the parity set, the history sweep, and the table's
distinct content files split into chunk objects."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass

from pyiceberg.io import FileIO
from pyiceberg.table.metadata import TableMetadata

from icepurge.activities.plan.chunk_output import ChunkOutput
from icepurge.activities.plan.content_partitions import ContentPartitioner
from icepurge.activities.plan.early_chunks import EarlyChunks, EarlyPacing
from icepurge.activities.plan.manifest_reader import UnparsableFileError, parse_manifest_entries
from icepurge.activities.plan.metadata_reader import parse_metadata, read_bytes
from icepurge.activities.plan.ordered_reads import OrderedReads
from icepurge.activities.plan.plan_model import (
    ChunkContext,
    Plan,
    PlanCheckpoint,
    PlannedFile,
    UnreadableFile,
    UnreadableReason,
    context_uri,
    reach_partial_uri,
    reach_uri,
)
from icepurge.activities.plan.reach_walk import (
    PartialReach,
    ReachableFiles,
    ReachSaves,
    WalkReading,
    reach,
    unreadable_file,
)
from icepurge.catalogs.locations import LocationGuard, table_locations
from icepurge.contract.counts import Category
from icepurge.contract.request import PurgeRequest
from icepurge.state.state_store import StateStore
from icepurge.stores.shared_threads import BoundedPool

log = logging.getLogger(__name__)

GC_ENABLED = "gc.enabled"


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
    # Planning saves what it holds (a pending part and a record) after this many manifests or
    # manifest entries, whichever comes first: two reads of the pool, or under a second of
    # decoding, so that an attempt living two seconds (workers dying in a loop) still moves the
    # plan on. Counted, not timed, so that every attempt of a plan writes the same objects under
    # the same names, whatever its pace (see `_enumerate_content`). What it costs in state
    # writes: BENCHMARKS.md, "Planning through a crash loop".
    checkpoint_manifests: int = 16
    checkpoint_entries: int = 25_000


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
    # A retry: what an earlier attempt saved beside the plan is looked for, whatever its last
    # heartbeat said (heartbeats are throttled; a worker killed seconds after a save sent none).
    retried: bool = False


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
    reachable = _reachable(build, current, beat)
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
        pending_parts=content.pending_parts,
    )


def _reachable(build: PlanBuild, current: TableMetadata, beat: _Heartbeat) -> ReachableFiles:
    """What an earlier attempt found and saved, or the walk, from where an earlier one stood."""
    state, plan_uri = build.state, build.plan_uri
    resuming = build.retried or beat.checkpoint.reach_saved
    saved = state.read(reach_uri(plan_uri)) if resuming else None
    if saved is not None:
        return ReachableFiles.model_validate_json(saved)
    partial = state.read(reach_partial_uri(plan_uri)) if resuming else None
    saves = ReachSaves(state, reach_partial_uri(plan_uri))
    resumed = PartialReach.model_validate_json(partial) if partial else None
    reachable = reach(
        build.io, current, build.request, WalkReading(build.sizing.readers, beat, saves, resumed)
    )
    state.write(reach_uri(plan_uri), reachable, compress=True)
    beat.save(PlanCheckpoint(reach_saved=True))
    if partial or saves.saved:
        state.delete(reach_partial_uri(plan_uri))
    return reachable


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
    with BoundedPool(sizing.readers) as pool:
        reads = OrderedReads(io, pool, 2 * sizing.readers, beat)
        for index, (path, read) in enumerate(reads.in_order(reads.fetch, paths[first:]), start=first):
            try:
                chunks.add(parse_manifest_entries(path, read()))
            except FileNotFoundError:
                unreadable.append(unreadable_file(path, Category.MANIFESTS, UnreadableReason.MISSING))
            except UnparsableFileError as error:
                unreadable.append(
                    unreadable_file(path, Category.MANIFESTS, UnreadableReason.CORRUPT, str(error))
                )
            entries_since += entries[index]
            manifests_since += 1
            due = entries_since >= sizing.checkpoint_entries or manifests_since >= sizing.checkpoint_manifests
            checkpoint = chunks.boundary(index + 1, unreadable, due)
            if checkpoint is not None:
                beat.save(checkpoint)
                entries_since = manifests_since = 0
    return unreadable
