"""Content chunks handed out while planning still reads manifests, so deletes start early.

When the table's manifest entries fit planning's memory budget, one set of seen paths
deduplicates them and chunks are cut in the order manifests are read: after a manifest, once a
chunk's worth of new files is pending (or a checkpoint is due), they are written as chunk
objects, then recorded in the emitted object, and only then announced to the workflow.

Deleting beside planning costs CPU that planning's decoding needs (on a small host the store
shares it too), so the first chunk is cut early only when the manifests left would take planning
long enough to pay for it: their entries, at the decoding pace measured here
(`DECODED_ENTRIES_PER_SECOND`), at least `overlap_min_seconds`. Otherwise chunks are cut when
planning ends, as if there were no overlap. The projection counts entries instead of timing
them so that where chunks are cut depends on the manifests alone (see planner._enumerate_content).

Between chunks, a checkpoint that is due saves the files pending since the last one as a part
(`PendingParts`) and records it; it cuts no chunk, so where chunks are cut never depends on how
often planning checkpoints.

A retried attempt resumes from that record, not from its heartbeat: every chunk a workflow may
have started is in it. The attempt rebuilds the seen paths from the chunk objects and pending
parts recorded and never rewrites a chunk, so a chunk already deleting keeps its files and each
distinct file stays in exactly one chunk. Chunks written after the record (by an attempt that
died before recording them) were never announced, and are written again.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from itertools import accumulate

from icepurge.activities.plan.chunk_output import ChunkOutput
from icepurge.activities.plan.content_partitions import ContentSummary
from icepurge.activities.plan.pending_parts import PendingParts
from icepurge.activities.plan.plan_model import (
    ContentChunk,
    ContentFile,
    PlanCheckpoint,
    UnreadableFile,
    content_chunk_uri,
    emitted_uri,
)
from icepurge.activities.state_objects import missing_state_object

# Manifest entries planning gets through a second during a purge here, beside the deletes and the
# store (alone it decodes 67k-95k a second, bench/results/planning_cpu.txt): at this pace the
# projection takes the decisions the measured one took in BENCHMARKS.md, "Deleting while
# planning" (no overlap at 6k append-only files, overlap at 20k and on rewrite-heavy tables).
DECODED_ENTRIES_PER_SECOND = 30_000


@dataclass(frozen=True)
class EarlyPacing:
    """What is pending when planning ends is cut in at least `last_pieces`, so the chunk window
    fills; chunks are cut early only when planning projects `overlap_min_seconds` still to read."""

    last_pieces: int = 1
    overlap_min_seconds: float = 0.0


class EarlyChunks:
    def __init__(
        self,
        output: ChunkOutput,
        *,
        chunk_files: int,
        announce: Callable[[int], None],
        manifest_entries: Sequence[int] = (),
        pacing: EarlyPacing | None = None,
    ) -> None:
        """`announce` hears how many chunk objects are ready, each time there are more.
        `manifest_entries` are the entries each manifest lists, in the order they are read."""
        state, plan_uri = output.state, output.plan_uri
        pacing = pacing or EarlyPacing()
        self._state = state
        self._plan_uri = plan_uri
        self._chunk_files = chunk_files
        self._beat = output.beat
        self._announce = announce
        self._last_pieces = pacing.last_pieces
        saved = state.read(emitted_uri(plan_uri))
        self.resumed = (
            PlanCheckpoint.model_validate_json(saved) if saved else PlanCheckpoint(reach_saved=True)
        )
        self._summary = ContentSummary()
        self._seen: set[str] = set()
        self._pending: list[ContentFile] = []
        self._manifests_done = self.resumed.manifests_done
        self._unreadable = list(self.resumed.unreadable)
        for index in range(self.resumed.chunks_emitted):
            self._take_back(index)
        self._parts = PendingParts(state, plan_uri, self.resumed)
        for file in self._parts.resumed_files():
            self._seen.add(file.path)
            self._pending.append(file)
        self._entries_before = [0, *accumulate(manifest_entries)]
        self._overlap_min_seconds = pacing.overlap_min_seconds

    def add(self, files: Iterable[ContentFile]) -> None:
        seen, parts = self._seen, self._parts
        for file in files:
            if file.path not in seen:
                seen.add(file.path)
                self._pending.append(file)
                parts.note(file)

    def boundary(
        self, manifests_done: int, unreadable: list[UnreadableFile], due: bool
    ) -> PlanCheckpoint | None:
        """After manifest `manifests_done - 1`: cuts the pending files into chunks when a chunk's
        worth is pending (a quarter for the first: the store waits idle until it comes, and only
        when planning has long enough left), else saves them when a checkpoint is due; returns
        the checkpoint when it recorded one."""
        self._manifests_done = manifests_done
        self._unreadable = list(unreadable)
        first = not self._summary.chunk_sizes
        worth = max(1, self._chunk_files // 4) if first else self._chunk_files
        if len(self._pending) >= worth and not (first and self.seconds_left() < self._overlap_min_seconds):
            return self._emit()
        if due:
            self._parts.save()
            return self._record()
        return None

    def seconds_left(self) -> float:
        """Planning's time still to come: the entries of the manifests not read yet, at
        DECODED_ENTRIES_PER_SECOND (0 when the manifests' entry counts are unknown)."""
        counts = self._entries_before
        done = min(self._manifests_done, len(counts) - 1)
        return (counts[-1] - counts[done]) / DECODED_ENTRIES_PER_SECOND

    def finish(self) -> ContentSummary:
        """Writes the last chunks. The record stays until finalize removes the plan's objects:
        an attempt retried after this one finished must find every chunk it announced."""
        self._emit(self._last_pieces)
        self._summary.pending_parts = self._parts.written
        return self._summary

    def _emit(self, least_pieces: int = 1) -> PlanCheckpoint:
        before = len(self._summary.chunk_sizes)
        pending = sorted(self._pending, key=lambda file: file.path)
        # Even pieces of at most 1.5 chunks: a sliver left over would cost a chunk activity of
        # its own for a handful of files.
        pieces = min(len(pending), max(least_pieces, round(len(pending) / self._chunk_files)))
        for piece in range(pieces):
            self._write_chunk(pending[piece * len(pending) // pieces : (piece + 1) * len(pending) // pieces])
        self._pending = []
        self._parts.consumed()
        record = self._record()
        if record.chunks_emitted > before:
            self._announce(record.chunks_emitted)
        return record

    def _record(self) -> PlanCheckpoint:
        record = self._parts.record(
            PlanCheckpoint(
                reach_saved=True,
                manifests_done=self._manifests_done,
                unreadable=self._unreadable,
                chunks_emitted=len(self._summary.chunk_sizes),
            )
        )
        self._state.write(emitted_uri(self._plan_uri), record)
        return record

    def _write_chunk(self, files: list[ContentFile]) -> None:
        uri = content_chunk_uri(self._plan_uri, len(self._summary.chunk_sizes))
        self._state.write(uri, ContentChunk.of(files), compress=True)
        self._count(files)
        self._beat()

    def _take_back(self, index: int) -> None:
        uri = content_chunk_uri(self._plan_uri, index)
        raw = self._state.read(uri)
        if raw is None:
            raise missing_state_object("chunk object (planning resumed)", uri)
        files = ContentChunk.model_validate_json(raw).files()
        self._seen.update(file.path for file in files)
        self._count(files)
        self._beat()

    def _count(self, files: list[ContentFile]) -> None:
        summary = self._summary
        summary.chunk_sizes.append(len(files))
        for file in files:
            summary.by_category[file.category] = summary.by_category.get(file.category, 0) + 1
