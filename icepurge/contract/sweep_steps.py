"""The location sweep's step: what it lists and deletes, how it resumes, what it reports."""

from __future__ import annotations

from datetime import datetime

from pydantic import Field

from icepurge.contract.request import Engine, PurgeRequest
from icepurge.contract.strict_model import StrictModel


class SweepInput(StrictModel):
    purge_id: str
    request: PurgeRequest
    prefixes: list[str] = Field(description="Locations to list, each a folder.")
    cutoff: datetime = Field(description="Only objects last modified before this are swept.")
    engine: Engine = Field(Engine.LOCAL, description="Spark: the location is split into parallel listings.")
    dry_run_report: str | None = Field(
        None, description="A dry run's report: its would-delete files are the plan's, not the sweep's."
    )
    run_chain: str | None = Field(
        None,
        description="The purge's first run id: its listing and checkpoints are kept apart from any "
        "other run under the same purge id (a table re-created and purged again, a re-run). None: "
        "a sweep started before run-scoped state.",
    )

    def state_parts(self, *parts: str) -> list[str]:
        """Where, under the state location, this sweep keeps `parts`."""
        chain = [self.run_chain] if self.run_chain else []
        return [self.purge_id, *chain, *parts]

    @property
    def job_tag(self) -> str:
        return "-".join([self.purge_id, *([self.run_chain] if self.run_chain else []), "sweep"])


class SweepCheckpoint(StrictModel):
    """Heartbeat details: where the listing stands and what it did so far."""

    prefix_index: int = 0
    continuation_token: str | None = None
    swept: int = 0
    kept_recent: int = 0
    failed: int = 0
    by_prefix: dict[str, int] = Field(default_factory=dict)
    pages: int = 0


class SweepResult(StrictModel):
    swept: int
    kept_recent: int
    failed: int
    by_prefix: dict[str, int]
    listing_location: str = Field(description="The swept (or, in a dry run, would-sweep) objects, listed.")
    listings: int = Field(1, description="Parts of the location listed in parallel (Spark tasks).")


class SweepOutcome(StrictModel):
    """In the status and report: what the sweep did, or why it did nothing."""

    applied: bool
    detail: str
    swept: int = 0
    kept_recent: int = 0
    failed: int = 0
    by_prefix: dict[str, int] = Field(default_factory=dict)
    listing_location: str | None = None
    listings: int = 0
    cutoff: datetime | None = None
