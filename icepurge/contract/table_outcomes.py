"""How each table of a namespace purge ended, as the namespace purge counts it: done, failed,
skipped (protected, gone) or cancelled; and a batch's tables tallied where they ran, so that a
batch hands its namespace purge counts, not reports. A dry run that met a refusal counts as the
real purge would: failed."""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import StrEnum

from pydantic import Field

from icepurge.contract.names import (
    ERROR_LIVE_TABLE,
    ERROR_PROTECTED,
    ERROR_TABLE_NOT_FOUND,
    FAILURE_SAMPLE_SIZE,
)
from icepurge.contract.namespace_status import FileTotals, SkipKind, SkippedEntry, TableFailure
from icepurge.contract.states import PurgeState
from icepurge.contract.status import PurgeReport
from icepurge.contract.strict_model import StrictModel

# What a table purge's failure type means to the namespace purge: left alone, not failed.
_SKIP_REASONS = {ERROR_PROTECTED: "protected", ERROR_TABLE_NOT_FOUND: "gone"}
_ERROR_LIMIT = 500


class TableEnd(StrEnum):
    DONE = "done"
    FAILED = "failed"
    SKIPPED = "skipped"
    CANCELLED = "cancelled"


@dataclass(frozen=True)
class TableOutcome:
    end: TableEnd
    files: FileTotals | None = None
    failure: TableFailure | None = None
    skipped: SkippedEntry | None = None
    # A dry run that met a refusal: the real purge would drop the table before its guard refused.
    dropped_first: bool = False

    @property
    def table_stays(self) -> bool:
        """Whether the real purge leaves the table in its catalog."""
        return self.end is not TableEnd.DONE and not self.dropped_first


def files_of(report: PurgeReport) -> FileTotals:
    status = report.status
    total = status.counts.total()
    return FileTotals(
        planned=status.files_total,
        done=status.files_done,
        deleted=total.deleted,
        failed=status.failures_total,
        bytes_deleted=total.bytes_deleted,
        swept=status.sweep.swept if status.sweep else 0,
    )


def skipped_table(name: str, reason: str) -> SkippedEntry:
    return SkippedEntry(kind=SkipKind.TABLE, name=name, reason=reason)


def outcome_of_report(purge_id: str, table: str, report: PurgeReport) -> TableOutcome:
    status = report.status
    refusal = next((guard.detail for guard in status.guards if not guard.passed), None)
    if status.dry_run and refusal is not None:
        failure = TableFailure(
            table=table, purge_id=purge_id, error_type=ERROR_LIVE_TABLE, error=refusal[:_ERROR_LIMIT]
        )
        # The real purge would plan these files and delete none.
        return TableOutcome(
            TableEnd.FAILED,
            files=FileTotals(planned=status.files_total),
            failure=failure,
            dropped_first=status.by_name,
        )
    return TableOutcome(TableEnd.DONE, files=files_of(report))


def outcome_of_batch(purge_id: str, table: str, report: PurgeReport) -> TableOutcome:
    """A table purged in a batch ends with a report whatever happened, a failure's too."""
    status = report.status
    if status.state is PurgeState.FAILED:
        outcome = outcome_of_error(purge_id, table, status.error_type, status.last_error or "failed")
        # Its files count as a failed workflow's latest event would have them.
        return replace(outcome, files=files_of(report))
    return outcome_of_report(purge_id, table, report)


def outcome_of_error(purge_id: str, table: str, error_type: str | None, message: str) -> TableOutcome:
    if error_type in _SKIP_REASONS:
        return TableOutcome(TableEnd.SKIPPED, skipped=skipped_table(table, _SKIP_REASONS[error_type]))
    failure = TableFailure(
        table=table, purge_id=purge_id, error_type=error_type, error=message[:_ERROR_LIMIT]
    )
    return TableOutcome(TableEnd.FAILED, failure=failure)


class TableTallies(StrictModel):
    """Tables that ended, by how, with their files and a sample of failures and skips: what a
    batch hands its namespace purge instead of each table's report (those stay in each table's
    record), so a batch's result stays a few hundred bytes whatever its tables found."""

    done: int = 0
    failed: int = 0
    skipped: int = 0
    cancelled: int = 0
    files: FileTotals = Field(default_factory=FileTotals)
    failure_sample: list[TableFailure] = Field(default_factory=list)
    skipped_sample: list[SkippedEntry] = Field(default_factory=list)

    @property
    def tables(self) -> int:
        return self.done + self.failed + self.skipped + self.cancelled

    def count(self, outcome: TableOutcome) -> None:
        if outcome.files is not None:
            self.files.add(outcome.files)
        if outcome.end is TableEnd.DONE:
            self.done += 1
        elif outcome.end is TableEnd.FAILED:
            self.failed += 1
            if outcome.failure is not None and len(self.failure_sample) < FAILURE_SAMPLE_SIZE:
                self.failure_sample.append(outcome.failure)
        elif outcome.end is TableEnd.SKIPPED:
            self.skipped += 1
            if outcome.skipped is not None and len(self.skipped_sample) < FAILURE_SAMPLE_SIZE:
                self.skipped_sample.append(outcome.skipped)
        else:
            self.cancelled += 1
