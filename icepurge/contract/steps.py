"""Inputs and outputs of the purge's activities: small, so workflow history stays small."""

from __future__ import annotations

from pydantic import Field

from icepurge.contract.counts import FileCounts
from icepurge.contract.names import CHUNK_ACTIVITY
from icepurge.contract.request import Engine, PurgeRequest
from icepurge.contract.status import FileFailure, GuardOutcome, PlannedTotals
from icepurge.contract.strict_model import StrictModel


class PlanInput(StrictModel):
    purge_id: str
    request: PurgeRequest


class PlanSummary(StrictModel):
    """The plan's claim check: a reference and totals; file lists only in `held`, for a plan the
    express lane's finish takes at once."""

    plan_location: str
    chunk_count: int
    planned: PlannedTotals
    gc_enabled: bool
    engine: Engine = Field(Engine.LOCAL, description="The engine chosen for the chunks (never auto).")
    planning_counts: FileCounts = Field(
        default_factory=FileCounts, description="Files the plan already settled (skipped)."
    )
    unreadable_files: int = Field(
        0, description="Files planning found absent or unparsable (listed in the report)."
    )
    locations: list[str] = Field(
        default_factory=list, description="The table's locations, for the live-table guard."
    )
    held: dict[str, str] | None = Field(
        None,
        description="A small plan's state objects (base64, by name in the plan's folder), kept out "
        "of the state location: the express finish deletes and finalizes from them.",
    )


class ChunkInput(StrictModel):
    purge_id: str
    request: PurgeRequest
    plan_location: str
    chunk_index: int
    engine: Engine = Engine.LOCAL


def chunk_step(chunk_index: int) -> str:
    """How a chunk is named where a step is: in retry reports and in status.retrying."""
    return f"{CHUNK_ACTIVITY} {chunk_index}"


class ChunkCheckpoint(StrictModel):
    """Files [0, next_file) of the chunk are settled and counted."""

    next_file: int = 0
    counts: FileCounts = Field(default_factory=FileCounts)
    failures_total: int = 0


class ChunkProgress(StrictModel):
    """A running chunk's counts so far, signalled by its activity so status moves mid-chunk."""

    chunk_index: int
    counts: FileCounts


class ChunksReady(StrictModel):
    """Signalled by planning: chunk objects [0, chunks) are written and recorded, and may start
    deleting before the plan is done. Signals may be lost or overtaken: the highest count holds."""

    plan_location: str
    chunks: int
    engine: Engine = Field(description="The engine for every chunk of this plan (never auto).")
    locations: list[str] = Field(description="The table's locations, for the live-table guard.")


class StepAttemptFailed(StrictModel):
    """An activity attempt that failed and will be retried, signalled by the attempt itself: the
    workflow can't see its pending activities' failures otherwise."""

    step: str = Field(description="plan_purge, delete_content_chunk <index> or finalize_purge.")
    attempt: int
    error: str


class ChunkResult(StrictModel):
    chunk_index: int
    counts: FileCounts
    failures_total: int
    failure_sample: list[FileFailure]
    delete_requests: int
    throttled_requests: int = 0


class FinalizeInput(StrictModel):
    purge_id: str
    request: PurgeRequest
    plan_location: str
    chunk_count: int
    keep_metadata_chain: bool = Field(
        description="Content deletes failed: keep manifest lists and metadata so a re-run can finish."
    )
    counts_so_far: FileCounts = Field(description="Counts of planning and chunks, for the report.")
    guards: list[GuardOutcome] = Field(
        default_factory=list, description="What the guards found, or why they were not applied."
    )


class FinalizeResult(StrictModel):
    counts: FileCounts
    failures_total: int
    failure_sample: list[FileFailure]
    report_location: str
    delete_requests: int = 0
    throttled_requests: int = 0
