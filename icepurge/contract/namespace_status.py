"""What a namespace purge reports: tables and files across its table purges, live (query) and
final (result). Table purge ids are listed from visibility (PurgeParent), not kept here."""

from __future__ import annotations

from enum import StrEnum

from pydantic import Field

from icepurge.contract.status_common import PurgeStatusCommon
from icepurge.contract.strict_model import StrictModel
from icepurge.contract.table_selection import TableSelection


class NamespacePurgeState(StrEnum):
    PENDING = "PENDING"
    ENUMERATING = "ENUMERATING"
    PURGING = "PURGING"
    DROPPING_NAMESPACES = "DROPPING_NAMESPACES"
    SUCCEEDED = "SUCCEEDED"
    SUCCEEDED_WITH_ERRORS = "SUCCEEDED_WITH_ERRORS"
    FAILED = "FAILED"
    CANCELLED = "CANCELLED"


NAMESPACE_TERMINAL_STATES = frozenset(
    {
        NamespacePurgeState.SUCCEEDED,
        NamespacePurgeState.SUCCEEDED_WITH_ERRORS,
        NamespacePurgeState.FAILED,
        NamespacePurgeState.CANCELLED,
    }
)


class SkipKind(StrEnum):
    TABLE = "table"
    NAMESPACE = "namespace"
    VIEW = "view"
    # Another engine's kind of catalog entry, neither table nor view.
    ENTRY = "entry"


class SkippedEntry(StrictModel):
    """An entry the namespace purge left in the catalog, and why."""

    kind: SkipKind
    name: str = Field(description="Catalog, levels and name joined by dots.")
    reason: str = Field(
        description="protected, not_iceberg, gone, `unselected: <the condition it failed>`, or a kept "
        "namespace's reason."
    )


class SkippedPage(StrictModel):
    """The entries a namespace purge's enumeration left alone, a page at a time: tables the selection
    didn't select, protected namespaces, views and other engines' entries."""

    purge_id: str
    state: str
    entries: list[SkippedEntry]
    next_offset: int | None = Field(None, description="Pass as offset for the next page; null at the end.")


class TableFailure(StrictModel):
    table: str
    purge_id: str
    error_type: str | None
    error: str


class FileTotals(StrictModel):
    """Distinct files across table purges: planned, deleted, failed."""

    planned: int = 0
    done: int = 0
    deleted: int = 0
    failed: int = 0
    bytes_deleted: int = 0
    swept: int = Field(0, description="Objects the location sweep deleted (or would, in a dry run).")

    def add(self, other: FileTotals) -> None:
        self.planned += other.planned
        self.done += other.done
        self.deleted += other.deleted
        self.failed += other.failed
        self.bytes_deleted += other.bytes_deleted
        self.swept += other.swept


class RunningTable(StrictModel):
    table: str
    purge_id: str
    state: str = "PENDING"
    files: FileTotals = Field(default_factory=FileTotals)


class NamespacePurgeStatus(PurgeStatusCommon):
    state: NamespacePurgeState
    recursive: bool
    max_concurrent_tables: int
    selection: TableSelection | None = Field(None, description="The request's selection, if any.")
    tables_total: int = Field(
        0,
        description="Iceberg tables found and selected (all found, without a selection), protected "
        "ones included.",
    )
    tables_done: int = Field(0, description="Table purges that succeeded (with errors included).")
    tables_failed: int = 0
    tables_skipped: int = Field(0, description="Protected, or gone before its purge loaded it.")
    tables_running: int = 0
    tables_cancelled: int = 0
    tables_unselected: int = Field(
        0,
        description="Tables found that the selection left alone (or a listed table not found), each "
        "listed among the skipped entries with the condition it failed.",
    )
    files: FileTotals = Field(
        default_factory=FileTotals, description="Finished table purges plus the running ones' latest."
    )
    ranges_total: int = Field(
        0, description="Child workflows the table list is handed to in ranges (0: none, one workflow)."
    )
    ranges_done: int = 0
    ranges_running: int = 0
    namespaces_total: int = Field(0, description="Namespaces walked, the purged one included.")
    namespaces_dropped: int = Field(
        0, description="Namespaces dropped; in a dry run, those the real run would drop."
    )
    entries_skipped: int = Field(0, description="Protected namespaces and non-Iceberg entries left alone.")
    skipped_sample: list[SkippedEntry] = Field(default_factory=list)
    failure_sample: list[TableFailure] = Field(default_factory=list)
    running: list[RunningTable] = Field(default_factory=list)
    rate_tables_per_minute: float | None = None
    tree_location: str | None = Field(
        None, description="The enumeration's table list, in the state location."
    )

    @property
    def tables_finished(self) -> int:
        return self.tables_done + self.tables_failed + self.tables_skipped + self.tables_cancelled


class NamespacePurgeReport(StrictModel):
    status: NamespacePurgeStatus
    duration_seconds: float
