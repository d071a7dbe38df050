"""Deletes one chunk of manifests: every entry's file first, then the manifest itself."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from pydantic import BaseModel, ConfigDict, Field
from pyiceberg.io import FileIO

from activities.bulk_delete import DeleteOutcome, ObjectStore
from activities.locations import LocationGuard, parent_dir
from activities.manifest_reader import ContentFile, read_manifest_entries
from activities.plan_model import Plan, PlannedManifest
from activities.state_store import StateStore
from workflows.constants import FAILURE_SAMPLE_SIZE
from workflows.counts import CONTENT_CATEGORIES, Category, FileCounts, SkipReason
from workflows.status import FileFailure
from workflows.steps import ChunkCheckpoint, ChunkResult

# Files per delete call between heartbeats, so a huge manifest still heartbeats in time.
SLICE = 8_000


class ChunkOutcome(BaseModel):
    """Per-file lists that don't belong in history: the full failure list, the dry-run list."""

    model_config = ConfigDict(extra="forbid")

    failures: list[FileFailure] = Field(default_factory=list)
    would_delete: list[str] = Field(default_factory=list)


def chunk_outcome_uri(plan_uri: str, chunk_index: int) -> str:
    return f"{parent_dir(plan_uri)}/chunks/{chunk_index:06d}.json"


@dataclass
class ChunkJob:
    plan: Plan
    plan_uri: str
    chunk_index: int
    io: FileIO
    store: ObjectStore
    state: StateStore
    guard: LocationGuard
    dry_run: bool
    heartbeat: Callable[[ChunkCheckpoint], None]
    _committed: ChunkCheckpoint = field(default_factory=ChunkCheckpoint, init=False)

    def run(self, checkpoint: ChunkCheckpoint) -> ChunkResult:
        if self.dry_run:
            # Nothing was deleted, so a retried dry run simply starts over.
            checkpoint = ChunkCheckpoint()
        outcome_uri = chunk_outcome_uri(self.plan_uri, self.chunk_index)
        outcome = ChunkOutcome()
        if checkpoint.next_manifest > 0:
            saved = self.state.read(outcome_uri)
            outcome = ChunkOutcome.model_validate_json(saved) if saved else outcome
        manifests = self.plan.chunks[self.chunk_index]
        requests = 0
        for index in range(checkpoint.next_manifest, len(manifests)):
            # Mid-manifest heartbeats resend the last finished cursor and its counters, so a retry
            # redoes the manifest in progress without counting its files twice.
            self._committed = checkpoint.model_copy(deep=True)
            failures_before = len(outcome.failures)
            requests += self._manifest(manifests[index], checkpoint.counts, outcome)
            checkpoint.failures_total = len(outcome.failures)
            if len(outcome.failures) > failures_before:
                self.state.write(outcome_uri, outcome)
            checkpoint.next_manifest = index + 1
            self.heartbeat(checkpoint)
        if self.dry_run and outcome.would_delete:
            self.state.write(outcome_uri, outcome)
        return ChunkResult(
            chunk_index=self.chunk_index,
            counts=checkpoint.counts,
            failures_total=checkpoint.failures_total,
            failure_sample=outcome.failures[:FAILURE_SAMPLE_SIZE],
            delete_requests=requests,
        )

    def _manifest(self, manifest: PlannedManifest, counts: FileCounts, outcome: ChunkOutcome) -> int:
        """Deletes a manifest's files, then the manifest; returns the delete requests sent."""
        try:
            entries = read_manifest_entries(self.io, manifest.path)
        except FileNotFoundError:
            counts.of(Category.MANIFESTS).already_missing += 1
            return 0
        pending: dict[str, ContentFile] = {}
        for entry in entries:
            reason = self._skip_reason(entry)
            if reason is not None:
                counts.of(entry.category).skipped[reason] = counts.of(entry.category).skipped.get(reason, 0) + 1
                if reason is SkipReason.DRY_RUN:
                    outcome.would_delete.append(entry.path)
            else:
                pending.setdefault(entry.path, entry)
        paths = list(pending)
        requests = 0
        entry_failed = False
        for start in range(0, len(paths), SLICE):
            result = self.store.delete(paths[start : start + SLICE])
            requests += result.requests
            entry_failed |= bool(result.failed)
            _tally(result, counts, outcome, lambda path: pending[path].category, lambda path: pending[path].size)
            self.heartbeat(self._committed)
        return requests + self._delete_manifest(manifest, counts, outcome, entry_failed)

    def _delete_manifest(
        self, manifest: PlannedManifest, counts: FileCounts, outcome: ChunkOutcome, entry_failed: bool
    ) -> int:
        manifests = counts.of(Category.MANIFESTS)
        reason = (
            SkipReason.KEPT_FOR_RETRY
            if entry_failed
            else SkipReason.FOREIGN_LOCATION
            if not manifest.owned
            else SkipReason.DRY_RUN
            if self.dry_run
            else None
        )
        if reason is not None:
            manifests.skipped[reason] = manifests.skipped.get(reason, 0) + 1
            if reason is SkipReason.DRY_RUN:
                outcome.would_delete.append(manifest.path)
            return 0
        result = self.store.delete([manifest.path])
        _tally(result, counts, outcome, lambda _: Category.MANIFESTS, lambda _: manifest.length)
        return result.requests

    def _skip_reason(self, entry: ContentFile) -> SkipReason | None:
        if not self.plan.gc_enabled and entry.category in CONTENT_CATEGORIES:
            return SkipReason.GC_DISABLED
        if not self.guard.allows(entry.path):
            return SkipReason.FOREIGN_LOCATION
        if self.dry_run:
            return SkipReason.DRY_RUN
        return None



def _tally(
    result: DeleteOutcome,
    counts: FileCounts,
    outcome: ChunkOutcome,
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
        outcome.failures.append(FileFailure(path=path, category=category_of(path), error=error))
