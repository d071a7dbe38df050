"""Per-category, per-outcome file counters: what a purge did to every file it considered."""

from __future__ import annotations

from enum import StrEnum

from pydantic import Field

from icepurge.contract.strict_model import StrictModel


class Category(StrEnum):
    DATA_FILES = "data_files"
    POSITION_DELETE_FILES = "position_delete_files"
    EQUALITY_DELETE_FILES = "equality_delete_files"
    MANIFESTS = "manifests"
    MANIFEST_LISTS = "manifest_lists"
    METADATA_FILES = "metadata_files"
    STATISTICS_FILES = "statistics_files"


CONTENT_CATEGORIES = frozenset(
    {Category.DATA_FILES, Category.POSITION_DELETE_FILES, Category.EQUALITY_DELETE_FILES}
)


class SkipReason(StrEnum):
    GC_DISABLED = "gc_disabled"
    FOREIGN_LOCATION = "foreign_location"
    DRY_RUN = "dry_run"
    KEPT_FOR_RETRY = "kept_for_retry"


class OutcomeCounts(StrictModel):
    deleted: int = 0
    already_missing: int = 0
    failed: int = 0
    skipped: dict[SkipReason, int] = Field(default_factory=dict)
    bytes_deleted: int = 0

    def add(self, other: OutcomeCounts) -> None:
        self.deleted += other.deleted
        self.already_missing += other.already_missing
        self.failed += other.failed
        self.bytes_deleted += other.bytes_deleted
        for reason, count in other.skipped.items():
            self.skipped[reason] = self.skipped.get(reason, 0) + count

    @property
    def skipped_total(self) -> int:
        return sum(self.skipped.values())

    @property
    def done(self) -> int:
        return self.deleted + self.already_missing + self.failed + self.skipped_total


class FileCounts(StrictModel):
    """Outcome counts by category; the same shape in chunk results, status and report."""

    by_category: dict[Category, OutcomeCounts] = Field(default_factory=dict)

    def of(self, category: Category) -> OutcomeCounts:
        return self.by_category.setdefault(category, OutcomeCounts())

    def add(self, other: FileCounts) -> None:
        for category, counts in other.by_category.items():
            self.of(category).add(counts)

    def total(self) -> OutcomeCounts:
        total = OutcomeCounts()
        for counts in self.by_category.values():
            total.add(counts)
        return total
