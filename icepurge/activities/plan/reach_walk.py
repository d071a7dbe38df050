"""The files a plan reaches besides content files: the manifest lists and manifests it reads,
older metadata files (read) and the version hint (only looked for).

A long history takes a walk of many reads. What the walk has found, and where it stands, is saved
beside the plan every few reads (`PartialReach`), so an attempt that dies while walking leaves its
retry only the rest to read. The walk's order depends on the metadata alone: a walk resumed
from any saved point finds what an uninterrupted one finds, in the same order."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass

from pydantic import Field
from pyiceberg.io import FileIO
from pyiceberg.table.metadata import TableMetadata

from icepurge.activities.plan.manifest_reader import UnparsableFileError, parse_manifest_list
from icepurge.activities.plan.metadata_reader import TerminalMetadataError
from icepurge.activities.plan.object_reads import object_exists
from icepurge.activities.plan.ordered_reads import OrderedReads
from icepurge.activities.plan.plan_model import UnreadableFile, UnreadableReason
from icepurge.activities.plan.read_retry import read_retrying
from icepurge.catalogs.locations import parent_dir
from icepurge.contract.counts import Category
from icepurge.contract.names import ERROR_METADATA_CORRUPT, ERROR_METADATA_NOT_FOUND, ERROR_UNSUPPORTED_FORMAT
from icepurge.contract.request import PurgeRequest
from icepurge.contract.strict_model import StrictModel
from icepurge.state.state_store import StateStore
from icepurge.stores.addresses import normalize
from icepurge.stores.shared_threads import BoundedPool

log = logging.getLogger(__name__)

VERSION_HINT = "version-hint.text"
# Reads between two saves of a walk: two rounds of the planning pool, so that an attempt living
# a second or two (a fresh worker's first reads included) still saves. A save waits, besides, for
# this multiple of what the last one took: a big history's saves never take more than a fifth of
# its walk.
SAVE_READS = 16
SAVE_COST_MULTIPLE = 4.0
Progress = Callable[[], None]


def unreadable_file(
    path: str, category: Category, reason: UnreadableReason, detail: str = ""
) -> UnreadableFile:
    log.warning("%s %s skipped while planning: %s", reason.value, category.value, path)
    return UnreadableFile(path=path, category=category, reason=reason, detail=detail)


class ReachableFiles(StrictModel):
    """Files reachable from the metadata, in discovery order, without duplicates; saved beside
    the plan once found, so a retried planning attempt does not walk the metadata again."""

    manifests: dict[str, int] = Field(default_factory=dict, description="Path: entries it lists.")
    manifest_lists: dict[str, None] = Field(default_factory=dict, description="Read (or found unreadable).")
    statistics: dict[str, None] = Field(default_factory=dict)
    metadata: dict[str, None] = Field(default_factory=dict)
    unreadable: list[UnreadableFile] = Field(default_factory=list)
    sizes: dict[str, int] = Field(
        default_factory=dict,
        description="Bytes of the metadata-side files: read (lists, metadata files) or recorded "
        "where they are listed (a manifest's length, a statistics file's size).",
    )

    def add_snapshots(self, reads: OrderedReads, metadata: TableMetadata, progress: Progress) -> None:
        """The snapshots' manifest lists not read yet, each marked read once it is."""
        fresh = dict.fromkeys(
            snapshot.manifest_list
            for snapshot in metadata.snapshots
            if snapshot.manifest_list and snapshot.manifest_list not in self.manifest_lists
        )
        for location, read in reads.in_order(reads.fetch, list(fresh)):
            try:
                raw = read()
                manifests = parse_manifest_list(location, raw)
            except FileNotFoundError:
                self._unreadable_list(location, UnreadableReason.MISSING)
                progress()
                continue
            except UnparsableFileError as error:
                self._unreadable_list(location, UnreadableReason.CORRUPT, str(error))
                progress()
                continue
            self.manifest_lists[location] = None
            self.sizes[location] = len(raw)
            for manifest in manifests:
                self.manifests.setdefault(manifest.path, manifest.entries)
                self.sizes.setdefault(manifest.path, manifest.length)
            progress()
        for statistics in [*metadata.statistics, *metadata.partition_statistics]:
            self.statistics[statistics.statistics_path] = None
            self.sizes[statistics.statistics_path] = statistics.file_size_in_bytes

    def _unreadable_list(self, location: str, reason: UnreadableReason, detail: str = "") -> None:
        self.manifest_lists[location] = None
        self.unreadable.append(unreadable_file(location, Category.MANIFEST_LISTS, reason, detail))


class WalkCursor(StrictModel):
    """Where the walk of the metadata logs stands: the level being read, from `next_index` on
    (that metadata file read again on a resume), the next level so far, every log entry met."""

    level: list[str]
    next_index: int = 0
    following: list[str] = Field(default_factory=list)
    seen: list[str] = Field(description="Normalized.")


class PartialReach(StrictModel):
    """A walk cut off: what it found, and where it stood (None: still on the current metadata
    file's own snapshots)."""

    reachable: ReachableFiles
    walk: WalkCursor | None = None


class ReachSaves:
    """Saves a walk's progress at `uri` every SAVE_READS reads, unless the last save took more
    than a SAVE_COST_MULTIPLE-th of the time since."""

    def __init__(self, state: StateStore, uri: str, clock: Callable[[], float] = time.monotonic) -> None:
        self._state = state
        self._uri = uri
        self._clock = clock
        self._last = clock()
        self._cost = 0.0
        self._reads = 0
        self.saved = False

    def maybe(self, partial: Callable[[], PartialReach]) -> None:
        """After a read."""
        self._reads += 1
        started = self._clock()
        if self._reads < SAVE_READS or started - self._last < SAVE_COST_MULTIPLE * self._cost:
            return
        self._state.write(self._uri, partial(), compress=True)
        self.saved = True
        self._reads = 0
        self._last = self._clock()
        self._cost = self._last - started


@dataclass(frozen=True)
class WalkReading:
    """How a walk reads (`readers` at once, beating while it waits), where it saves its progress
    (None: nowhere) and where an earlier attempt's walk stood (None: at the start)."""

    readers: int
    beat: Callable[[], None]
    saves: ReachSaves | None = None
    resumed: PartialReach | None = None


def reach(io: FileIO, current: TableMetadata, request: PurgeRequest, reading: WalkReading) -> ReachableFiles:
    """Every file the purge reaches besides content files."""
    readers, beat, saves, resumed = reading.readers, reading.beat, reading.saves, reading.resumed
    reachable = resumed.reachable if resumed else ReachableFiles()
    walk = resumed.walk if resumed else None

    def progress() -> None:
        if saves is not None:
            saves.maybe(lambda: PartialReach(reachable=reachable, walk=walk))

    with BoundedPool(readers) as pool:
        reads = OrderedReads(io, pool, 2 * readers, beat)
        if walk is None:
            reachable.add_snapshots(reads, current, progress)
            level = [entry.metadata_file for entry in current.metadata_log]
            walk = WalkCursor(level=level, seen=list(dict.fromkeys(normalize(path) for path in level)))
        _walk_metadata_log(reads, walk, reachable, request.options.history_sweep, progress)
    hint = parent_dir(request.snapshot_location()) + "/" + VERSION_HINT
    if read_retrying(lambda: object_exists(io, hint), hint, beat):
        reachable.metadata[hint] = None
    reachable.metadata.pop(request.snapshot_location(), None)
    return reachable


def _walk_metadata_log(
    reads: OrderedReads, walk: WalkCursor, reachable: ReachableFiles, sweep: bool, progress: Progress
) -> None:
    """Older metadata files, and older ones still reachable from their own logs (as Iceberg's
    Spark action does); with the sweep, their snapshots' files too. Breadth first, a level of
    the logs read at once.

    A transient fault is retried (and then fails the attempt) rather than skipped: deleting a
    metadata file whose snapshots were never swept would leak their files for good."""
    seen = set(walk.seen)
    while walk.level:
        remaining = walk.level[walk.next_index :]
        for index, (location, read) in enumerate(
            reads.in_order(reads.metadata, remaining), start=walk.next_index
        ):
            walk.next_index = index
            reachable.metadata[location] = None
            try:
                older, reachable.sizes[location] = read()
            except TerminalMetadataError as error:
                reason = _UNREADABLE_METADATA.get(error.type or "")
                if reason is None:
                    raise
                reachable.unreadable.append(
                    unreadable_file(location, Category.METADATA_FILES, reason, str(error))
                )
                walk.next_index = index + 1
                progress()
                continue
            for entry in older.metadata_log:
                path = normalize(entry.metadata_file)
                if path not in seen:
                    seen.add(path)
                    walk.seen.append(path)
                    walk.following.append(entry.metadata_file)
            if sweep:
                reachable.add_snapshots(reads, older, progress)
            walk.next_index = index + 1
            progress()
        walk.level, walk.following, walk.next_index = walk.following, [], 0


_UNREADABLE_METADATA = {
    ERROR_METADATA_NOT_FOUND: UnreadableReason.MISSING,
    ERROR_METADATA_CORRUPT: UnreadableReason.CORRUPT,
    ERROR_UNSUPPORTED_FORMAT: UnreadableReason.CORRUPT,
}
