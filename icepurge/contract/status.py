"""What a purge reports: the live status (query) and the final report (workflow result)."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum

from pydantic import Field

from icepurge.contract.counts import FileCounts
from icepurge.contract.states import PurgeState
from icepurge.contract.status_common import PurgeStatusCommon
from icepurge.contract.strict_model import StrictModel
from icepurge.contract.sweep_steps import SweepOutcome


class GuardName(StrEnum):
    PROTECTION = "protection"
    LIVE_TABLE = "live_table"


class GuardOutcome(StrictModel):
    """What a guard found, or why it could not be applied."""

    guard: GuardName
    applied: bool
    passed: bool = Field(description="Nothing stood in the way (true too when not applied).")
    detail: str
    catalog_calls: int = 0
    tables_compared: int = 0
    seconds: float = 0.0


class FileFailure(StrictModel):
    path: str
    category: str
    error: str


class PlannedTotals(StrictModel):
    """Distinct files the plan found, by kind."""

    content_files: int = 0
    manifests: int = 0
    manifest_lists: int = 0
    metadata_files: int = 0
    statistics_files: int = 0

    @property
    def files(self) -> int:
        return (
            self.content_files
            + self.manifests
            + self.manifest_lists
            + self.metadata_files
            + self.statistics_files
        )


class RetryingStep(StrictModel):
    """A step the server is retrying, from its pending activities."""

    step: str
    attempt: int
    last_error: str | None = None
    next_attempt_at: datetime | None = None


class PurgeStatus(PurgeStatusCommon):
    state: PurgeState
    table: str
    metadata_location: str | None = Field(
        None, description="The purged snapshot's metadata; a purge by name knows it once loaded."
    )
    by_name: bool = Field(
        False, description="Started by name: icepurge loads the table and (unless a dry run) drops it."
    )
    engine: str = "local"
    gc_enabled: bool | None = None
    planned: PlannedTotals = Field(default_factory=PlannedTotals)
    counts: FileCounts = Field(default_factory=FileCounts)
    files_done: int = 0
    files_total: int = 0
    chunks_done: int = 0
    chunks_total: int = 0
    delete_requests: int = 0
    throttled_requests: int = Field(
        0, description="Delete requests the store throttled (503 SlowDown) that icepurge retried."
    )
    rate_files_per_second: float | None = None
    failure_sample: list[FileFailure] = Field(default_factory=list)
    failures_total: int = 0
    unreadable_files: int = Field(
        0,
        description="Metadata files, manifest lists or manifests that planning found absent or "
        "unparsable; their paths are in the report.",
    )
    retrying: RetryingStep | None = Field(
        None,
        description="A step being retried after a failed attempt: which, the attempt, its last error "
        "and when the next attempt is due. Read from the server by the clients.",
    )
    scheduled_for: datetime | None = Field(
        None, description="Soft delete: when the deletes begin unless expedited or undropped."
    )
    dropped_at: datetime | None = Field(
        None, description="When this purge dropped the table's catalog entry (purge by name)."
    )
    held_as: str | None = Field(
        None,
        description="options.hold_namespace: the identifier the table was moved to when this purge "
        "took it out of its own (dropped_at), where it waits for its plan and the catalog's drop.",
    )
    storage_deleted_by_catalog: bool = Field(
        False,
        description="The catalog's drop deleted the table's storage itself (S3 Tables): the deletes "
        "then check each file first and count the gone ones as already missing.",
    )
    undropped_note: str | None = Field(
        None, description="An UNDROPPED purge: where the table is registered again, or why not."
    )
    outcome_note: str | None = Field(
        None,
        description="A closed purge: what its counts don't say by themselves, e.g. '5 already gone "
        "— the catalog deleted the table's storage on drop'.",
    )
    guards: list[GuardOutcome] = Field(
        default_factory=list, description="The guards applied, what they found, or why they were not."
    )
    sweep: SweepOutcome | None = Field(
        None,
        description="options.sweep_location: the objects swept (apart from the planned files), or why none.",
    )


class PurgeReport(StrictModel):
    """The workflow's result: the final status; full failure and would-delete lists are in the
    report object at report_location."""

    status: PurgeStatus
    duration_seconds: float
