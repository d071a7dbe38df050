"""The persisted plan: every file list of a purge, kept in the state location, not in history.

Content files are not in the plan object itself: they are deduplicated into chunk objects
(`ContentChunk`) beside it, each distinct file in exactly one chunk."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from pydantic import Field

from icepurge.contract.counts import Category
from icepurge.contract.strict_model import StrictModel


@dataclass(frozen=True, slots=True)
class ContentFile:
    path: str
    category: Category
    size: int
    # Met first in a DELETED entry: an expiry that cleaned up may have removed it, so the store
    # is asked before it is counted (see parse_manifest_entries).
    unsure: bool = False


class ContentChunk(StrictModel):
    """One chunk's distinct content files, by column: compact JSON for thousands of files."""

    paths: list[str] = Field(default_factory=list)
    categories: list[Category] = Field(default_factory=list)
    sizes: list[int] = Field(default_factory=list)
    unsure: list[int] = Field(default_factory=list, description="Indexes of the unsure files.")

    @classmethod
    def of(cls, files: list[ContentFile]) -> ContentChunk:
        return cls(
            paths=[file.path for file in files],
            categories=[file.category for file in files],
            sizes=[file.size for file in files],
            unsure=[index for index, file in enumerate(files) if file.unsure],
        )

    def files(self) -> list[ContentFile]:
        unsure = set(self.unsure)
        return [
            ContentFile(path, category, size, index in unsure)
            for index, (path, category, size) in enumerate(
                zip(self.paths, self.categories, self.sizes, strict=True)
            )
        ]


class PlannedFile(StrictModel):
    path: str
    category: Category


class UnreadableReason(StrEnum):
    MISSING = "missing"
    CORRUPT = "corrupt"


class UnreadableFile(StrictModel):
    """A metadata file, manifest list or manifest that planning could not read for good: truly
    absent (404) or truly unparsable. Transient faults are retried, never listed here."""

    path: str
    category: Category
    reason: UnreadableReason
    detail: str = ""


class PlanCheckpoint(StrictModel):
    """Planning's heartbeat: the reachable files are saved beside the plan, manifests
    [0, manifests_done) are in `spills` spilled parts, and the manifests found unreadable so far."""

    reach_saved: bool = False
    manifests_done: int = 0
    spills: int = 0
    unreadable: list[UnreadableFile] = Field(default_factory=list)
    chunks_emitted: int = Field(
        0,
        description="Chunk objects [0, chunks_emitted) and pending parts [parts_from, parts_written) "
        "hold the distinct files of manifests [0, manifests_done) (with the spilled parts, above "
        "the memory budget).",
    )
    parts_written: int = Field(0, description="Pending parts written so far (see PendingParts).")
    parts_from: int = Field(0, description="The first pending part no chunk or spill holds yet.")


class ChunkContext(StrictModel):
    """What a chunk needs besides its files, written before the first chunk object: chunks can
    start while planning still runs, before the plan object exists."""

    purge_id: str
    gc_enabled: bool
    locations: list[str]


class SpillLayout(StrictModel):
    """The parts a plan over the memory budget spilled: `parts` per bucket."""

    buckets: int
    parts: int


class Plan(StrictModel):
    purge_id: str
    metadata_location: str
    gc_enabled: bool
    locations: list[str]
    content_entries: int = Field(
        0, description="Entries the manifest lists record: a bound on the content files, known early."
    )
    content_chunks: list[int] = Field(description="Distinct content files in each chunk object.")
    content_by_category: dict[Category, int] = Field(default_factory=dict)
    manifests: list[str]
    manifest_lists: list[str]
    statistics_files: list[str]
    previous_metadata_files: list[str]
    current_metadata_file: str | None
    foreign_files: list[PlannedFile]
    unreadable: list[UnreadableFile] = Field(default_factory=list)
    sizes: dict[str, int] = Field(
        default_factory=dict,
        description="Bytes of the manifests, lists, metadata and statistics files, where known: "
        "finalize counts them as it deletes them.",
    )
    spill: SpillLayout | None = Field(None, description="Planning's spilled parts, removed by finalize.")
    pending_parts: int = Field(0, description="Pending parts planning wrote: finalize removes them.")

    def known_missing(self) -> frozenset[str]:
        """Files planning found absent (404): finalize counts them already_missing and sends no
        delete for them, since a bulk delete calls a gone key deleted."""
        return frozenset(file.path for file in self.unreadable if file.reason is UnreadableReason.MISSING)

    def finalize_groups(self) -> list[tuple[Category, list[str]]]:
        """Finalize's delete order: manifests once every chunk has deleted their entries, then
        what lists them; the current metadata file goes last, alone."""
        groups = [
            (Category.MANIFESTS, self.manifests),
            (Category.MANIFEST_LISTS, self.manifest_lists),
            (Category.STATISTICS_FILES, self.statistics_files),
            (Category.METADATA_FILES, self.previous_metadata_files),
        ]
        if self.current_metadata_file:
            groups.append((Category.METADATA_FILES, [self.current_metadata_file]))
        return groups


def context_uri(plan_uri: str) -> str:
    return f"{plan_uri.rsplit('/', 1)[0]}/context.json"


def emitted_uri(plan_uri: str) -> str:
    """Where planning records the chunks it has handed out early (see `EarlyChunks`)."""
    return f"{plan_uri.rsplit('/', 1)[0]}/emitted.json"


def reach_uri(plan_uri: str) -> str:
    return f"{plan_uri.rsplit('/', 1)[0]}/reach.json"


def reach_partial_uri(plan_uri: str) -> str:
    return f"{plan_uri.rsplit('/', 1)[0]}/reach-partial.json"


def pending_part_uri(plan_uri: str, part: int) -> str:
    return f"{plan_uri.rsplit('/', 1)[0]}/pending/{part:06d}.json"


def spill_part_uri(plan_uri: str, bucket: int, part: int) -> str:
    return f"{plan_uri.rsplit('/', 1)[0]}/spill/{bucket:05d}-{part:05d}.json"


def spill_part_uris(plan_uri: str, layout: SpillLayout | None) -> list[str]:
    if layout is None:
        return []
    return [
        spill_part_uri(plan_uri, bucket, part)
        for bucket in range(layout.buckets)
        for part in range(layout.parts)
    ]


def content_chunk_uri(plan_uri: str, chunk_index: int) -> str:
    return f"{plan_uri.rsplit('/', 1)[0]}/content/{chunk_index:06d}.json"
