"""Content files planning has read but holds only in memory (pending a chunk, or a spill), saved
as numbered parts beside the plan at each checkpoint. An attempt that dies between two chunks then
leaves its retry only the manifests after the last checkpoint to read, however far apart chunks
are cut. A part holds the files first met since the part before it, or since the last chunk or
spill; which files those are depends on the manifests alone, so part N is the same whichever
attempt writes it. Parts stay until finalize removes the plan's objects."""

from __future__ import annotations

from collections.abc import Iterator

from icepurge.activities.plan.plan_model import ContentChunk, ContentFile, PlanCheckpoint, pending_part_uri
from icepurge.activities.state_objects import missing_state_object
from icepurge.state.state_store import StateStore


class PendingParts:
    def __init__(self, state: StateStore, plan_uri: str, resumed: PlanCheckpoint) -> None:
        self._state = state
        self._plan_uri = plan_uri
        self.written = resumed.parts_written
        self.first = resumed.parts_from
        self._fresh: list[ContentFile] = []

    def note(self, file: ContentFile) -> None:
        """A file first met: the next part holds it, unless a chunk or spill does first."""
        self._fresh.append(file)

    def save(self) -> None:
        """Writes the files noted since the last part, chunk or spill (nothing when none were)."""
        if self._fresh:
            uri = pending_part_uri(self._plan_uri, self.written)
            self._state.write(uri, ContentChunk.of(self._fresh), compress=True)
            self.written += 1
            self._fresh = []

    def consumed(self) -> None:
        """Every file noted so far is in a chunk object or a spilled part now."""
        self._fresh = []
        self.first = self.written

    def resumed_files(self) -> Iterator[ContentFile]:
        """The files of the parts no chunk or spill holds yet, in the order they were met."""
        for part in range(self.first, self.written):
            uri = pending_part_uri(self._plan_uri, part)
            raw = self._state.read(uri)
            if raw is None:
                raise missing_state_object("pending part (planning resumed)", uri)
            yield from ContentChunk.model_validate_json(raw).files()

    def record(self, checkpoint: PlanCheckpoint) -> PlanCheckpoint:
        return checkpoint.model_copy(update={"parts_written": self.written, "parts_from": self.first})
