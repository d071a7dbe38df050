"""Deletes one chunk of manifests: every entry's file first, then the manifest itself."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field

from pydantic import BaseModel, ConfigDict, Field
from pyiceberg.io import FileIO

from activities.bulk_delete import DeleteOutcome, ObjectStore, RequestStats
from activities.locations import LocationGuard, parent_dir
from activities.manifest_reader import ContentFile, read_manifest_entries
from activities.plan_model import PlannedManifest
from activities.state_store import StateStore
from workflows.counts import CONTENT_CATEGORIES, Category, FileCounts, SkipReason
from workflows.status import FileFailure
from workflows.steps import ChunkCheckpoint

# Files per delete call between heartbeats, so a huge manifest still heartbeats in time.
SLICE = 8_000
# Manifests are handled in groups of about one DeleteObjects batch per request in flight, so
# small manifests share requests and every concurrent request slot has keys to send; the
# checkpoint moves once per group.
FILES_PER_REQUEST = 1_000
GROUP_MANIFESTS = 64


def manifest_groups(
    manifests: list[PlannedManifest], start: int, concurrency: int = 1
) -> list[tuple[int, int]]:
    group_files = FILES_PER_REQUEST * concurrency
    groups: list[tuple[int, int]] = []
    group_start, files = start, 0
    for index in range(start, len(manifests)):
        files += manifests[index].file_count
        if files >= group_files or index + 1 - group_start >= GROUP_MANIFESTS:
            groups.append((group_start, index + 1))
            group_start, files = index + 1, 0
    if group_start < len(manifests):
        groups.append((group_start, len(manifests)))
    return groups


class ChunkOutcome(BaseModel):
    """The chunk's durable record: its checkpoint, and per-file lists that don't belong in
    history (the full failure list, the dry-run list)."""

    model_config = ConfigDict(extra="forbid")

    checkpoint: ChunkCheckpoint = Field(default_factory=ChunkCheckpoint)
    failures: list[FileFailure] = Field(default_factory=list)
    would_delete: list[str] = Field(default_factory=list)


def chunk_outcome_uri(plan_uri: str, chunk_index: int) -> str:
    return f"{parent_dir(plan_uri)}/chunks/{chunk_index:06d}.json"


def _further(first: ChunkCheckpoint, second: ChunkCheckpoint) -> ChunkCheckpoint:
    def position(checkpoint: ChunkCheckpoint) -> tuple[int, int]:
        return checkpoint.next_manifest, checkpoint.entries_done_until

    return first if position(first) >= position(second) else second


@dataclass
class ChunkJob:
    """Deletes a list of manifests with their files, checkpointing to `outcome_uri`: a chunk in
    the local engine, one task's share of a chunk in the Spark engine."""

    manifests: list[PlannedManifest]
    gc_enabled: bool
    outcome_uri: str
    io: FileIO
    store: ObjectStore
    state: StateStore
    guard: LocationGuard
    dry_run: bool
    heartbeat: Callable[[ChunkCheckpoint], None]
    readers: ThreadPoolExecutor
    concurrency: int
    _outcome: ChunkOutcome = field(default_factory=ChunkOutcome, init=False)
    _committed: ChunkCheckpoint = field(default_factory=ChunkCheckpoint, init=False)

    def run(self, heartbeat_checkpoint: ChunkCheckpoint) -> tuple[ChunkOutcome, RequestStats]:
        """Resumes from the furthest checkpoint: the one saved in the state location (written
        before each heartbeat, so never behind) or the heartbeat's, should that write be lost.
        Returns the outcome and the delete requests this attempt sent."""
        if not self.dry_run:
            saved = self.state.read(self.outcome_uri)
            if saved:
                self._outcome = ChunkOutcome.model_validate_json(saved)
            self._outcome.checkpoint = _further(self._outcome.checkpoint, heartbeat_checkpoint)
        # A dry run deletes nothing, so a retried one simply starts over.
        checkpoint = self._outcome.checkpoint
        stats = RequestStats()
        groups = manifest_groups(self.manifests, checkpoint.next_manifest, self.concurrency)
        reads = self._read_group(groups, 0)
        for index, (group_start, group_end) in enumerate(groups):
            # Heartbeats inside a group resend the last saved checkpoint, so a retry redoes the
            # group in progress without counting its files twice.
            self._committed = checkpoint.model_copy(deep=True)
            group = self.manifests[group_start:group_end]
            listed = [read.result() for read in reads]
            # The next group's manifests are read while this group's files are deleted.
            reads = self._read_group(groups, index + 1)
            if checkpoint.entries_done_until < group_end:
                deleted = self._delete_entries(listed, checkpoint.counts)
                checkpoint.entries_done_until = group_end
                stats.add(deleted)
                self._save()
            stats.add(self._delete_manifests(group, listed, checkpoint.counts))
            checkpoint.next_manifest = group_end
            self._save()
        if self.dry_run and self._outcome.would_delete:
            self.state.write(self.outcome_uri, self._outcome)
        self._outcome.checkpoint.failures_total = len(self._outcome.failures)
        return self._outcome, stats

    def _read_group(
        self, groups: list[tuple[int, int]], index: int
    ) -> list[Future[list[ContentFile] | None]]:
        if index >= len(groups):
            return []
        start, end = groups[index]
        return [self.readers.submit(self._read, manifest) for manifest in self.manifests[start:end]]

    def _save(self) -> None:
        outcome = self._outcome
        outcome.checkpoint.failures_total = len(outcome.failures)
        if not self.dry_run:
            self.state.write(self.outcome_uri, outcome)
        self.heartbeat(outcome.checkpoint)

    def _read(self, manifest: PlannedManifest) -> list[ContentFile] | None:
        try:
            return read_manifest_entries(self.io, manifest.path)
        except FileNotFoundError:
            return None

    def _delete_entries(self, listed: list[list[ContentFile] | None], counts: FileCounts) -> RequestStats:
        """Deletes the content files of a group of manifests together."""
        pending: dict[str, ContentFile] = {}
        for entries in listed:
            for entry in entries or []:
                reason = self._skip_reason(entry)
                if reason is None:
                    pending.setdefault(entry.path, entry)
                else:
                    self._skip(counts, entry.category, reason, entry.path)
        paths = list(pending)
        total = RequestStats()
        for start in range(0, len(paths), SLICE):
            result = self.store.delete(paths[start : start + SLICE])
            total.add(result)
            self._tally(result, counts, lambda path: pending[path].category, lambda path: pending[path].size)
            self.heartbeat(self._committed)
        return total

    def _delete_manifests(
        self, group: list[PlannedManifest], listed: list[list[ContentFile] | None], counts: FileCounts
    ) -> RequestStats:
        """Deletes the group's manifests whose files are all gone; returns the requests sent."""
        failed = {failure.path for failure in self._outcome.failures}
        removable: dict[str, int] = {}
        for manifest, entries in zip(group, listed, strict=True):
            if entries is None:
                counts.of(Category.MANIFESTS).already_missing += 1
                continue
            reason = self._manifest_skip_reason(manifest, any(entry.path in failed for entry in entries))
            if reason is None:
                removable[manifest.path] = manifest.length
            else:
                self._skip(counts, Category.MANIFESTS, reason, manifest.path)
        stats = RequestStats()
        if removable:
            result = self.store.delete(list(removable))
            self._tally(result, counts, lambda _: Category.MANIFESTS, removable.__getitem__)
            stats.add(result)
        return stats

    def _skip(self, counts: FileCounts, category: Category, reason: SkipReason, path: str) -> None:
        skipped = counts.of(category).skipped
        skipped[reason] = skipped.get(reason, 0) + 1
        if reason is SkipReason.DRY_RUN:
            self._outcome.would_delete.append(path)

    def _tally(
        self,
        result: DeleteOutcome,
        counts: FileCounts,
        category_of: Callable[[str], Category],
        size_of: Callable[[str], int],
    ) -> None:
        for path in result.deleted:
            bucket = counts.of(category_of(path))
            bucket.deleted += 1
            bucket.bytes_deleted += size_of(path)
        for path in result.missing:
            counts.of(category_of(path)).already_missing += 1
        for path, error in result.failed:
            counts.of(category_of(path)).failed += 1
            self._outcome.failures.append(FileFailure(path=path, category=category_of(path), error=error))

    def _manifest_skip_reason(self, manifest: PlannedManifest, entry_failed: bool) -> SkipReason | None:
        if entry_failed:
            return SkipReason.KEPT_FOR_RETRY
        if not manifest.owned:
            return SkipReason.FOREIGN_LOCATION
        if self.dry_run:
            return SkipReason.DRY_RUN
        return None

    def _skip_reason(self, entry: ContentFile) -> SkipReason | None:
        if not self.gc_enabled and entry.category in CONTENT_CATEGORIES:
            return SkipReason.GC_DISABLED
        if not self.guard.allows(entry.path):
            return SkipReason.FOREIGN_LOCATION
        if self.dry_run:
            return SkipReason.DRY_RUN
        return None
