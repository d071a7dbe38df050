"""How each table purge of a namespace purge ended, as the namespace purge counts it: done,
failed, skipped (protected, gone) or cancelled. A dry run that met a refusal counts as the real
purge would: failed."""

from __future__ import annotations

from dataclasses import replace

from pydantic import BaseModel, ConfigDict
from temporalio.exceptions import ApplicationError, CancelledError, ChildWorkflowError

from icepurge.contract.names import ERROR_LIVE_TABLE, ERROR_PROTECTED, ERROR_TABLE_NOT_FOUND
from icepurge.contract.namespace_status import FileTotals, SkipKind, SkippedEntry, TableFailure
from icepurge.contract.states import PurgeState
from icepurge.contract.status import PurgeReport
from icepurge.workflows.namespace_progress import TableEnd, TableOutcome, files_of, skipped_table

# What a table purge's failure type means to the namespace purge: left alone, not failed.
_SKIP_REASONS = {ERROR_PROTECTED: "protected", ERROR_TABLE_NOT_FOUND: "gone"}
_ERROR_LIMIT = 500
# A dry run remembers this many tables its previews would not purge, for its preview of which
# namespaces would be dropped; beyond, it makes no such preview (the list would outgrow a payload).
KEPT_TABLES_LIMIT = 20_000


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


def outcome_of_failure(purge_id: str, table: str, error: ChildWorkflowError) -> TableOutcome:
    cause = error.cause
    if isinstance(cause, CancelledError):
        return TableOutcome(TableEnd.CANCELLED)
    error_type = cause.type if isinstance(cause, ApplicationError) else None
    message = cause.message if isinstance(cause, ApplicationError) else str(cause or error)
    return _outcome_of_error(purge_id, table, error_type, message)


def outcome_of_batch(purge_id: str, table: str, report: PurgeReport) -> TableOutcome:
    """A table purged in a batch ends with a report whatever happened, a failure's too."""
    status = report.status
    if status.state is PurgeState.FAILED:
        outcome = _outcome_of_error(purge_id, table, status.error_type, status.last_error or "failed")
        # Its files count as a failed workflow's latest event would have them.
        return replace(outcome, files=files_of(report))
    return outcome_of_report(purge_id, table, report)


def _outcome_of_error(purge_id: str, table: str, error_type: str | None, message: str) -> TableOutcome:
    if error_type in _SKIP_REASONS:
        return TableOutcome(TableEnd.SKIPPED, skipped=skipped_table(table, _SKIP_REASONS[error_type]))
    failure = TableFailure(
        table=table, purge_id=purge_id, error_type=error_type, error=message[:_ERROR_LIMIT]
    )
    return TableOutcome(TableEnd.FAILED, failure=failure)


def already_started(purge_id: str, table: str) -> TableOutcome:
    failure = TableFailure(
        table=table,
        purge_id=purge_id,
        error_type="AlreadyStarted",
        error="an earlier run of this namespace purge already purged it; see that purge",
    )
    return TableOutcome(TableEnd.FAILED, failure=failure)


class KeptTables(BaseModel):
    """A dry run's tables (places in its table list) that the real purge would not purge."""

    model_config = ConfigDict(extra="forbid")

    indices: list[int] = []
    overflow: bool = False

    def keep(self, index: int) -> None:
        if len(self.indices) < KEPT_TABLES_LIMIT:
            self.indices.append(index)
        else:
            self.overflow = True


def drops_not_previewed(name: str) -> SkippedEntry:
    reason = f"drops not previewed: over {KEPT_TABLES_LIMIT:,} tables would not be purged"
    return SkippedEntry(kind=SkipKind.NAMESPACE, name=name, reason=reason)
