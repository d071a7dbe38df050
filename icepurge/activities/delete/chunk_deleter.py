"""Deletes one chunk's content files: distinct files, each sent to the store once, in groups
that checkpoint as they finish (a retried attempt's first groups smaller: retried_groups.py)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from pydantic import Field

from icepurge.activities.delete.object_store import ObjectStore
from icepurge.activities.delete.retried_groups import group_sizes, retried
from icepurge.activities.plan.plan_model import ContentFile
from icepurge.catalogs.locations import LocationGuard, parent_dir
from icepurge.contract.counts import CONTENT_CATEGORIES, FileCounts, SkipReason
from icepurge.contract.status import FileFailure
from icepurge.contract.steps import ChunkCheckpoint
from icepurge.contract.strict_model import StrictModel
from icepurge.state.state_store import StateStore
from icepurge.stores.outcomes import DeleteOutcome, RequestStats


def group_size(concurrency: int, batch_files: int) -> int:
    """Files per group: one bulk request per request slot, so every concurrent slot has keys
    to send; the checkpoint moves once per group."""
    return batch_files * concurrency


class ChunkOutcome(StrictModel):
    """The chunk's durable record: its checkpoint, and per-file lists that don't belong in
    history (the full failure list, the dry-run list)."""

    checkpoint: ChunkCheckpoint = Field(default_factory=ChunkCheckpoint)
    failures: list[FileFailure] = Field(default_factory=list)
    would_delete: list[str] = Field(default_factory=list)


def chunk_outcome_uri(plan_uri: str, chunk_index: int) -> str:
    return f"{parent_dir(plan_uri)}/chunks/{chunk_index:06d}.json"


@dataclass
class ChunkJob:
    """Deletes a list of distinct content files, checkpointing to `outcome_uri`: a chunk in the
    local engine, one task's slice of a chunk in the Spark engine."""

    files: list[ContentFile]
    gc_enabled: bool
    outcome_uri: str
    store: ObjectStore
    state: StateStore
    guard: LocationGuard
    dry_run: bool
    heartbeat: Callable[[ChunkCheckpoint], None]
    concurrency: int
    batch_files: int
    _outcome: ChunkOutcome = field(default_factory=ChunkOutcome, init=False)

    def run(self, heartbeat_checkpoint: ChunkCheckpoint) -> tuple[ChunkOutcome, RequestStats]:
        """Resumes from the furthest checkpoint: the one saved in the state location (written
        before each heartbeat, so never behind) or the heartbeat's, should that write be lost.
        Returns the outcome and the delete requests this attempt sent."""
        if not self.dry_run:
            saved = self.state.read(self.outcome_uri)
            if saved:
                self._outcome = ChunkOutcome.model_validate_json(saved)
            if heartbeat_checkpoint.next_file > self._outcome.checkpoint.next_file:
                self._outcome.checkpoint = heartbeat_checkpoint
        # A dry run deletes nothing, so a retried one simply starts over.
        checkpoint = self._outcome.checkpoint
        stats = RequestStats()
        sizes = group_sizes(group_size(self.concurrency, self.batch_files), self.batch_files, retried())
        while checkpoint.next_file < len(self.files):
            start = checkpoint.next_file
            end = min(start + next(sizes), len(self.files))
            # A retry redoes the group in flight from the last saved checkpoint, so a file is
            # counted once however often its delete is sent.
            stats.add(self._delete(self.files[start:end], checkpoint.counts))
            checkpoint.next_file = end
            self._save()
        if self.dry_run and self._outcome.would_delete:
            self.state.write(self.outcome_uri, self._outcome)
        checkpoint.failures_total = len(self._outcome.failures)
        return self._outcome, stats

    def _save(self) -> None:
        outcome = self._outcome
        outcome.checkpoint.failures_total = len(outcome.failures)
        if not self.dry_run:
            self.state.write(self.outcome_uri, outcome)
        self.heartbeat(outcome.checkpoint)

    def _delete(self, files: list[ContentFile], counts: FileCounts) -> RequestStats:
        pending: dict[str, ContentFile] = {}
        for file in files:
            reason = self._skip_reason(file)
            if reason is None:
                pending[file.path] = file
            else:
                skipped = counts.of(file.category).skipped
                skipped[reason] = skipped.get(reason, 0) + 1
                if reason is SkipReason.DRY_RUN:
                    self._outcome.would_delete.append(file.path)

        def alive() -> None:
            # While the group is in flight, the last saved checkpoint again: the step stays alive.
            self.heartbeat(self._outcome.checkpoint)

        stats = RequestStats()
        # Unsure files are deleted apart, the store asked first (see ContentFile.unsure).
        for asking in (False, True):
            paths = [path for path, file in pending.items() if file.unsure is asking]
            if not paths:
                continue
            result = self.store.delete(paths, alive=alive, asking=asking)
            self._tally(result, counts, pending)
            stats.add(result)
        return stats

    def _tally(self, result: DeleteOutcome, counts: FileCounts, files: dict[str, ContentFile]) -> None:
        for path in result.deleted:
            bucket = counts.of(files[path].category)
            bucket.deleted += 1
            bucket.bytes_deleted += files[path].size
        for path in result.missing:
            counts.of(files[path].category).already_missing += 1
        for path, error in result.failed:
            category = files[path].category
            counts.of(category).failed += 1
            self._outcome.failures.append(FileFailure(path=path, category=category, error=error))

    def _skip_reason(self, file: ContentFile) -> SkipReason | None:
        if not self.gc_enabled and file.category in CONTENT_CATEGORIES:
            return SkipReason.GC_DISABLED
        if not self.guard.allows(file.path):
            return SkipReason.FOREIGN_LOCATION
        if self.dry_run:
            return SkipReason.DRY_RUN
        return None
