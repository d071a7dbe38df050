"""Deduplicates a table's content files into chunk objects with bounded memory, for tables whose
manifest entries exceed planning's memory budget (below it, `EarlyChunks` cuts chunks as
manifests arrive, so deletes start before planning ends).

Real tables list one file in many manifests (copy-on-write rewrites, merge-append, manifest
rewrites), so manifest entries are not files. Planning hashes every entry by path into buckets;
a bucket is a dict, so a second listing of a file is dropped where it arrives. When the entries
held pass the memory budget, every bucket is spilled to the state location, and at the end each
bucket is merged back alone. Memory stays near the budget whatever the table's size, and each
distinct file lands in exactly one chunk object. The spilled parts stay until finalize removes
the plan's objects: an attempt cut off but still running must not remove a part its retry reads.

A checkpoint between spills saves the files held since the last one as a pending part
(`PendingParts`) and records where planning stands beside the plan: a retried attempt puts the
pending parts back in their buckets and reads on from there.

Why here and not in the engines: once planning has done it, chunks share nothing. The local
engine needs no set across chunks or worker restarts, and a Spark task only reads its own slice
of a chunk object: no shuffle, no driver-side set, no state shared between executors.
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Iterable
from dataclasses import dataclass, field

from icepurge.activities.plan.chunk_output import ChunkOutput
from icepurge.activities.plan.pending_parts import PendingParts
from icepurge.activities.plan.plan_model import (
    ContentChunk,
    ContentFile,
    PlanCheckpoint,
    SpillLayout,
    UnreadableFile,
    content_chunk_uri,
    emitted_uri,
    spill_part_uri,
)
from icepurge.contract.counts import Category


@dataclass
class ContentSummary:
    chunk_sizes: list[int] = field(default_factory=list)
    by_category: dict[Category, int] = field(default_factory=dict)
    spill: SpillLayout | None = None
    pending_parts: int = 0


class ContentPartitioner:
    def __init__(
        self,
        output: ChunkOutput,
        *,
        expected_entries: int,
        memory_files: int,
        chunk_files: int,
        resumed: PlanCheckpoint | None = None,
    ) -> None:
        """`resumed` is the checkpoint an earlier attempt heartbeated; the one it recorded beside
        the plan wins when it is further on (heartbeats are throttled, records are not). This
        attempt merges that one's spilled parts and takes its pending parts back."""
        self._state = output.state
        self._plan_uri = output.plan_uri
        self._memory_files = memory_files
        self._chunk_files = chunk_files
        self._beat = output.beat
        # The manifest lists' counts bound the entries, so one bucket fits the budget unless
        # those counts are wrong; then buckets grow past it but stay correct.
        count = max(1, math.ceil(expected_entries / memory_files))
        self._buckets: list[dict[str, ContentFile]] = [{} for _ in range(count)]
        self._held = 0
        self.resumed = _furthest(output, resumed or PlanCheckpoint(reach_saved=True))
        self.spills = self.resumed.spills
        self._parts = PendingParts(self._state, self._plan_uri, self.resumed)
        for file in self._parts.resumed_files():
            self._hold(file)

    def add(self, files: Iterable[ContentFile]) -> None:
        parts = self._parts
        for file in files:
            if self._hold(file):
                parts.note(file)
        if self._held > self._memory_files and len(self._buckets) > 1:
            self.spill()

    def _hold(self, file: ContentFile) -> bool:
        """Whether the file is new to its bucket."""
        bucket = self._buckets[zlib.crc32(file.path.encode()) % len(self._buckets)]
        if file.path in bucket:
            return False
        bucket[file.path] = file
        self._held += 1
        return True

    def boundary(
        self, manifests_done: int, unreadable: list[UnreadableFile], due: bool
    ) -> PlanCheckpoint | None:
        """After manifest `manifests_done - 1`: when a checkpoint is due, saves the files held
        since the last one and records it."""
        if not due:
            return None
        self._parts.save()
        record = self._parts.record(
            PlanCheckpoint(
                reach_saved=True,
                manifests_done=manifests_done,
                spills=self.spills,
                unreadable=list(unreadable),
            )
        )
        self._state.write(emitted_uri(self._plan_uri), record)
        return record

    def finish(self) -> ContentSummary:
        """Writes the chunk objects, bucket by bucket; the summary says where the spilled parts are."""
        summary = ContentSummary(
            spill=SpillLayout(buckets=len(self._buckets), parts=self.spills),
            pending_parts=self._parts.written,
        )
        pending: list[ContentFile] = []
        for index in range(len(self._buckets)):
            merged = self._buckets[index]
            self._buckets[index] = {}
            for part in range(self.spills):
                raw = self._state.read(self._part_uri(index, part))
                for file in ContentChunk.model_validate_json(raw).files() if raw else []:
                    merged.setdefault(file.path, file)
                self._beat()
            for path in sorted(merged):
                file = merged[path]
                summary.by_category[file.category] = summary.by_category.get(file.category, 0) + 1
                pending.append(file)
                if len(pending) == self._chunk_files:
                    self._write_chunk(summary, pending)
                    pending = []
        if pending:
            self._write_chunk(summary, pending)
        return summary

    def _write_chunk(self, summary: ContentSummary, files: list[ContentFile]) -> None:
        uri = content_chunk_uri(self._plan_uri, len(summary.chunk_sizes))
        self._state.write(uri, ContentChunk.of(files), compress=True)
        summary.chunk_sizes.append(len(files))
        self._beat()

    def spill(self) -> None:
        """Writes every bucket to the state location: the bound on memory.

        An empty bucket writes nothing; a part an earlier, crashed attempt left under that name
        then stays and is merged too, which is harmless: it holds files of manifests this
        attempt reads anyway."""
        for index, bucket in enumerate(self._buckets):
            if bucket:
                files = list(bucket.values())
                self._state.write(self._part_uri(index, self.spills), ContentChunk.of(files), compress=True)
                bucket.clear()
            self._beat()
        self.spills += 1
        self._held = 0
        self._parts.consumed()

    def _part_uri(self, bucket: int, part: int) -> str:
        return spill_part_uri(self._plan_uri, bucket, part)


def _furthest(output: ChunkOutput, heartbeat: PlanCheckpoint) -> PlanCheckpoint:
    saved = output.state.read(emitted_uri(output.plan_uri))
    if saved is None:
        return heartbeat
    recorded = PlanCheckpoint.model_validate_json(saved)
    return recorded if recorded.manifests_done > heartbeat.manifests_done else heartbeat
