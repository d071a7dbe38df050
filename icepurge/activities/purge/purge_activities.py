"""The purge's step activities (plan, chunk, finalize): one pydantic input, one output, plain
`def` on the worker's pool, each a thin adapter over the purge's services."""

from __future__ import annotations

from temporalio import activity

from icepurge.activities.purge.purge_services import PurgeServices
from icepurge.activities.signals.attempt_reports import reporting_failed_attempts
from icepurge.activities.signals.progress_signals import ProgressSignals
from icepurge.activities.step_definition import implements
from icepurge.contract.activity_steps import CHUNK, FINALIZE, PLAN
from icepurge.contract.steps import (
    ChunkCheckpoint,
    ChunkInput,
    ChunkResult,
    FinalizeInput,
    FinalizeResult,
    PlanInput,
    PlanSummary,
    chunk_step,
)


class PurgeActivities:
    def __init__(self, services: PurgeServices, signals: ProgressSignals | None = None) -> None:
        self.services = services
        self._signals = signals

    @implements(PLAN)
    def plan_purge(self, step: PlanInput) -> PlanSummary:
        return self.services.planning.plan(step)

    @implements(CHUNK)
    def delete_content_chunk(self, step: ChunkInput) -> ChunkResult:
        with reporting_failed_attempts(self._signals, chunk_step(step.chunk_index)):
            details = activity.info().heartbeat_details
            checkpoint = ChunkCheckpoint.model_validate(details[0]) if details else ChunkCheckpoint()
            return self.services.chunks.delete_chunk_from(step, checkpoint)

    @implements(FINALIZE)
    def finalize_purge(self, step: FinalizeInput) -> FinalizeResult:
        return self.services.finalizing.finalize(step)
