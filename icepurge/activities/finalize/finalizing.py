"""Finalizing a purge: its metadata files deleted and its report written, once its chunks are
done (icepurge/activities/finalize/finalizer.py). The finalize step, the express lane and a
batch's tables all finalize here."""

from __future__ import annotations

from dataclasses import replace

from icepurge.activities.delete.chunk_deletes import ChunkDeletes
from icepurge.activities.delete.object_store import ObjectStore
from icepurge.activities.finalize.finalizer import FinalizeWork, finalize, finalized_before, written_report
from icepurge.activities.plan.plan_model import Plan
from icepurge.activities.settings import ActivitySettings, StepContext
from icepurge.activities.signals.attempt_reports import reporting_failed_attempts
from icepurge.activities.signals.request_metrics import RequestMetrics
from icepurge.activities.state_objects import missing_state_object
from icepurge.contract.express_steps import ExpressSteps, FinishResult
from icepurge.contract.names import FINALIZE_ACTIVITY
from icepurge.contract.steps import FinalizeInput, FinalizeResult


class Finalizing:
    def __init__(
        self,
        settings: ActivitySettings,
        context: StepContext,
        chunks: ChunkDeletes,
    ) -> None:
        self._settings = settings
        self._state = context.state
        self._chunks = chunks
        self._signals = context.signals
        self._heartbeat = context.heartbeat

    def finalize(self, step: FinalizeInput, express: ExpressSteps | None = None) -> FinalizeResult:
        """`express`: the express lane's steps before, kept in the report object."""
        with reporting_failed_attempts(self._signals, FINALIZE_ACTIVITY):
            return self._finalize(step, express)

    def _finalize(self, step: FinalizeInput, express: ExpressSteps | None) -> FinalizeResult:
        raw = self._state.read(step.plan_location)
        if raw is None:
            done = finalized_before(self._state, step.plan_location)
            if done is None:
                raise missing_state_object("plan object", step.plan_location)
            return done
        plan = Plan.model_validate_json(raw)
        options = step.request.options
        with ObjectStore(
            step.request.file_io_properties,
            options.concurrency,
            replace(self._settings.tuning, check_existence=options.check_existence),
            # Finalize runs alone: it holds the whole budget.
            options.bucket_requests_per_second,
            RequestMetrics("local").request_latency,
        ) as store:
            result = finalize(
                FinalizeWork(
                    plan=plan,
                    plan_uri=step.plan_location,
                    chunk_count=step.chunk_count,
                    store=store,
                    state=self._state,
                    dry_run=options.dry_run,
                    keep_metadata_chain=step.keep_metadata_chain,
                    counts_so_far=step.counts_so_far,
                    beat=self._heartbeat,
                    guards=step.guards,
                    express=express,
                )
            )
        self._chunks.forget(step.plan_location)
        return result

    def express_record(self, plan_uri: str) -> FinishResult | None:
        """An express finish that completed before, its result lost: what it did, again."""
        report = written_report(self._state, plan_uri)
        if report is None or report.finalize is None or report.express is None:
            return None
        return FinishResult(**report.express.model_dump(), finalize=report.finalize)
