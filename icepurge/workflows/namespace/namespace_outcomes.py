"""How a table purge workflow of a namespace purge ended, as the namespace purge counts it (the
rules themselves, shared with the batches, are icepurge.contract.table_outcomes'), and what a dry
run remembers of the tables the real purge would leave."""

from __future__ import annotations

from pydantic import Field
from temporalio.exceptions import ApplicationError, CancelledError, ChildWorkflowError

from icepurge.contract.namespace_status import SkipKind, SkippedEntry, TableFailure
from icepurge.contract.strict_model import StrictModel
from icepurge.contract.table_outcomes import TableEnd, TableOutcome, outcome_of_error

# A dry run remembers this many tables its previews would not purge, for its preview of which
# namespaces would be dropped; beyond, it makes no such preview (the list would outgrow a payload).
KEPT_TABLES_LIMIT = 20_000


def outcome_of_failure(purge_id: str, table: str, error: ChildWorkflowError) -> TableOutcome:
    cause = error.cause
    if isinstance(cause, CancelledError):
        return TableOutcome(TableEnd.CANCELLED)
    error_type = cause.type if isinstance(cause, ApplicationError) else None
    message = cause.message if isinstance(cause, ApplicationError) else str(cause or error)
    return outcome_of_error(purge_id, table, error_type, message)


def already_started(purge_id: str, table: str) -> TableOutcome:
    failure = TableFailure(
        table=table,
        purge_id=purge_id,
        error_type="AlreadyStarted",
        error="an earlier run of this namespace purge already purged it; see that purge",
    )
    return TableOutcome(TableEnd.FAILED, failure=failure)


class KeptTables(StrictModel):
    """A dry run's tables (places in its table list) that the real purge would not purge."""

    indices: list[int] = Field(default_factory=list)
    overflow: bool = False

    def keep(self, index: int) -> None:
        if len(self.indices) < KEPT_TABLES_LIMIT:
            self.indices.append(index)
        else:
            self.overflow = True


def drops_not_previewed(name: str) -> SkippedEntry:
    reason = f"drops not previewed: over {KEPT_TABLES_LIMIT:,} tables would not be purged"
    return SkippedEntry(kind=SkipKind.NAMESPACE, name=name, reason=reason)
