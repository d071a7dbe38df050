"""Listing purges from Temporal visibility: filters, one page of summaries."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, Field, computed_field, field_validator

from icepurge.contract.kinds import PurgeKind
from icepurge.contract.names import NAMESPACE_WORKFLOW_TYPE, WORKFLOW_TYPE
from icepurge.contract.reasons import typed_reason
from icepurge.contract.request import encode_namespace, printable
from icepurge.contract.states import PurgeState
from icepurge.contract.status import PurgeStatus
from icepurge.contract.strict_model import FrozenModel

_UNSAFE = frozenset("'\"\\")


WORKFLOW_TYPES = {PurgeKind.TABLE: WORKFLOW_TYPE, PurgeKind.NAMESPACE: NAMESPACE_WORKFLOW_TYPE}


def kind_of(workflow_type: str) -> PurgeKind:
    return PurgeKind.NAMESPACE if workflow_type == NAMESPACE_WORKFLOW_TYPE else PurgeKind.TABLE


class PurgeFilter(FrozenModel):
    kind: PurgeKind | None = Field(None, description="Table or namespace purges only; both when unset.")
    state: PurgeState | None = None
    catalog: str | None = None
    namespace: list[str] | None = Field(None, description="Namespace levels, outermost first.")
    table: str | None = None
    requested_by: str | None = None
    parent: str | None = Field(None, description="The namespace purge that started the purges.")
    started_since: datetime | None = Field(
        None, description="Only purges started then or later: a namespace purge's run among others."
    )

    @field_validator("catalog", "table", "requested_by", "parent")
    @classmethod
    def _quotable(cls, value: str | None) -> str | None:
        if value is not None and _UNSAFE & set(value):
            raise ValueError("quotes and backslashes are not supported in filters")
        return value if value is None else printable(value)

    @field_validator("namespace")
    @classmethod
    def _printable_levels(cls, levels: list[str] | None) -> list[str] | None:
        for level in levels or []:
            printable(level)
        return levels


class PurgeSummary(BaseModel):
    purge_id: str
    kind: PurgeKind = PurgeKind.TABLE
    state: str | None
    catalog: str | None
    namespace: str | None = Field(description="Levels joined by 0x1F, percent-encoded (Iceberg REST).")
    table: str | None
    requested_by: str | None
    files_total: int | None
    files_deleted: int | None
    files_failed: int | None
    error: str | None = Field(None, description="Why a FAILED purge failed (error type: message).")
    waiting: str | None = Field(
        None, description="What a running purge waits for: a step it retries, and why."
    )
    outcome_note: str | None = Field(
        None, description="A closed purge's note on what its counts don't say (files already gone, why)."
    )
    started_at: datetime | None
    closed_at: datetime | None
    scheduled_for: datetime | None = Field(None, description="A soft delete's time to begin deleting.")

    @computed_field(  # type: ignore[prop-decorator]
        description="Why it did not simply succeed: a FAILED purge's error, how many files failed, "
        "files it found already gone; for a running purge, what it waits for."
    )
    @property
    def reason(self) -> str | None:
        if self.state == "FAILED":
            return self.error or "failed (no reason recorded)"
        if self.state == "SUCCEEDED_WITH_ERRORS":
            failed = f"{self.files_failed or 0} files failed; the purge's report lists them"
            return f"{failed}; {self.outcome_note}" if self.outcome_note else failed
        if self.state == "CANCELLED":
            return "cancelled"
        return self.outcome_note if self.state == "SUCCEEDED" else self.waiting


def summary_of_record(status: PurgeStatus) -> PurgeSummary:
    """A table purged in a namespace purge's batch has no workflow: its record's status, as the
    listing shows a table purge."""
    total = status.counts.total()
    failed = status.state is PurgeState.FAILED
    error = typed_reason(status.last_error or "no message", status.error_type) if failed else None
    return PurgeSummary(
        purge_id=status.purge_id,
        state=status.state.value,
        catalog=status.catalog,
        namespace=encode_namespace(status.namespace),
        table=status.table,
        requested_by=status.requested_by,
        files_total=status.files_total,
        files_deleted=total.deleted,
        files_failed=total.failed,
        error=error,
        outcome_note=status.outcome_note,
        started_at=status.started_at,
        closed_at=status.finished_at,
    )


class PurgePage(BaseModel):
    items: list[PurgeSummary]
    next_page_token: str | None = Field(None, description="Pass back as page_token for the next page.")


def visibility_query(purge_filter: PurgeFilter, catalogs: frozenset[str] | None = None) -> str:
    """A Temporal list filter; `catalogs` restricts the result to those catalogs (None: any)."""
    kinds = [purge_filter.kind] if purge_filter.kind else list(PurgeKind)
    clauses = ["WorkflowType IN (" + ", ".join(f"'{WORKFLOW_TYPES[kind]}'" for kind in kinds) + ")"]
    values = {
        "PurgeState": purge_filter.state.value if purge_filter.state else None,
        "PurgeCatalog": purge_filter.catalog,
        "PurgeNamespace": encode_namespace(purge_filter.namespace) if purge_filter.namespace else None,
        "PurgeTable": purge_filter.table,
        "PurgeRequestedBy": purge_filter.requested_by,
        "PurgeParent": purge_filter.parent,
    }
    clauses += [f"{key} = '{value}'" for key, value in values.items() if value is not None]
    if purge_filter.started_since is not None:
        clauses.append(f"StartTime >= '{purge_filter.started_since.isoformat()}'")
    if catalogs is not None:
        if not catalogs or any(_UNSAFE & set(catalog) for catalog in catalogs):
            clauses.append("PurgeCatalog = ''")
        else:
            clauses.append(
                "PurgeCatalog IN (" + ", ".join(f"'{catalog}'" for catalog in sorted(catalogs)) + ")"
            )
    return " AND ".join(clauses)
