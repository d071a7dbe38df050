"""What every purge's status says, of one table or of many: who asked, when it ran, whether it is
paused and at what budget, how it ended. One model, so a field is added to both at once."""

from __future__ import annotations

from datetime import datetime

from pydantic import Field

from icepurge.contract.strict_model import StrictModel


class PurgeStatusCommon(StrictModel):
    purge_id: str
    catalog: str
    namespace: list[str]
    requested_by: str
    request_id: str | None = None
    dry_run: bool = False
    eta_seconds: float | None = None
    started_at: datetime | None = None
    updated_at: datetime | None = None
    finished_at: datetime | None = None
    last_error: str | None = None
    error_type: str | None = Field(None, description="Why a FAILED purge failed (MetadataNotFound, ...).")
    report_location: str | None = None
    run_count: int = Field(1, description="Runs of this purge so far (continue-as-new included).")
    paused: bool = Field(
        False,
        description="Paused by an operator: no table purge or delete starts, the running ones pause; "
        "resume to go on.",
    )
    bucket_requests_per_second: float | None = Field(
        None,
        description="The delete budget per bucket in force (the request's, or the last one set since); "
        "a namespace purge shares it evenly across its window.",
    )
    events_undelivered: int = Field(
        0, description="Events a sink or the notified workflow never received (sinks gave up)."
    )

    def moved(self, now: datetime, *, closes: bool, failed: bool) -> None:
        """Stamps a move to another state: a closing one ends the ETA (unknown when it failed)."""
        self.updated_at = now
        if closes:
            self.finished_at = now
            self.eta_seconds = None if failed else 0.0
