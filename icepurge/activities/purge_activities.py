"""The purge's activities: one pydantic input, one output, plain `def` on the worker's pool."""

from __future__ import annotations

import logging
import threading
import time
from collections import Counter, OrderedDict
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import replace
from typing import Any

# Every plan opens the table's FileIO, which for s3:// and file:// is PyArrow's: imported with the
# worker rather than inside its first purge's planning (0.6 s, measured in bench.compare_engines).
import pyiceberg.io.pyarrow  # noqa: F401
from pyiceberg.io import FileIO, load_file_io
from temporalio import activity
from temporalio.exceptions import ApplicationError

from icepurge.activities import heartbeats
from icepurge.activities.attempt_reports import reporting_failed_attempts
from icepurge.activities.catalog_admission import CatalogAdmission, admitted
from icepurge.activities.chunk_context import read_chunk_context
from icepurge.activities.chunk_deleter import chunk_outcome_uri
from icepurge.activities.config_faults import configuration_faults_bounded
from icepurge.activities.finalizer import finalize, finalized_before, written_report
from icepurge.activities.held_state import HeldFolder
from icepurge.activities.local_engine import run_files
from icepurge.activities.locations import parent_dir
from icepurge.activities.object_store import ObjectStore
from icepurge.activities.plan_model import (
    ChunkContext,
    ContentChunk,
    ContentFile,
    Plan,
    PlanCheckpoint,
    content_chunk_uri,
    context_uri,
)
from icepurge.activities.planner import ReadyChunks, build_plan
from icepurge.activities.progress_signals import ProgressReport, ProgressSignals
from icepurge.activities.request_metrics import RequestMetrics
from icepurge.activities.settings import ActivitySettings
from icepurge.activities.spark_engine import SparkEngine
from icepurge.activities.state_store import StateStore
from icepurge.activities.step_definition import implements
from icepurge.contract.activity_steps import CHUNK, FINALIZE, PLAN
from icepurge.contract.counts import Category, FileCounts, SkipReason
from icepurge.contract.express_steps import ExpressSteps, FinishResult, finishes_at_once
from icepurge.contract.names import (
    ERROR_ENGINE_UNAVAILABLE,
    ERROR_STATE_LOCATION,
    FAILURE_SAMPLE_SIZE,
    FINALIZE_ACTIVITY,
    PLAN_ACTIVITY,
)
from icepurge.contract.request import Engine, PurgeRequest
from icepurge.contract.status import PlannedTotals
from icepurge.contract.steps import (
    ChunkCheckpoint,
    ChunkInput,
    ChunkResult,
    ChunksReady,
    FinalizeInput,
    FinalizeResult,
    PlanInput,
    PlanSummary,
    chunk_step,
)
from icepurge.stores.outcomes import LatencyObserver
from icepurge.stores.rate_budget import task_share

log = logging.getLogger(__name__)
_CONTEXT_CACHE_SIZE = 8


def _table_io(request: PurgeRequest) -> FileIO:
    return load_file_io(request.file_io_properties, request.snapshot_location())


class PurgeActivities:
    def __init__(
        self,
        settings: ActivitySettings,
        spark: SparkEngine | None = None,
        signals: ProgressSignals | None = None,
        admission: CatalogAdmission | None = None,
        heartbeat: Callable[..., None] = heartbeats.heartbeat,
    ) -> None:
        self._settings = settings
        self._heartbeat = heartbeat
        self._spark = spark
        self._signals = signals
        # None: every catalog name is taken (tools that plan without a worker).
        self._admission = admission
        self._state = StateStore(settings.state_location, settings.state_properties)
        self._contexts: OrderedDict[str, ChunkContext] = OrderedDict()
        self._contexts_lock = threading.Lock()

    @property
    def all(self) -> list[Callable[..., Any]]:
        return [self.plan_purge, self.delete_content_chunk, self.finalize_purge]

    @implements(PLAN)
    def plan_purge(self, step: PlanInput) -> PlanSummary:
        with reporting_failed_attempts(self._signals, PLAN_ACTIVITY):
            return self._plan_purge(step)

    def plan_quietly(self, step: PlanInput) -> PlanSummary:
        """Planning for a purge that deletes only once its plan is done: no chunk is announced
        early (each announcement is a signal, an event in the purge's history). A plan the
        express finish takes at once is held in memory and handed over in the summary (`held`);
        a bigger one reaches the state location. An attempt after one that checkpointed resumes
        from the objects that checkpoint names, so it holds nothing."""
        with reporting_failed_attempts(self._signals, PLAN_ACTIVITY):
            if activity.info().heartbeat_details:
                return self._plan_purge(step, announcing=False)
            return self.plan_held(step)

    def plan_held(self, step: PlanInput) -> PlanSummary:
        """plan_quietly from the start, never from a checkpoint: for a caller whose heartbeats
        are not this plan's alone (a batch of tables)."""
        with self._state.holding(self.plan_folder(step.purge_id)) as held:
            summary = self._plan_purge(step, announcing=False, held=held, resuming=False)
            if held.flushed or not finishes_at_once(summary):
                self._state.flush(held)
                return summary
            return summary.model_copy(update={"held": held.encoded()})

    def holding_plan(self, plan: PlanSummary) -> AbstractContextManager[object]:
        """Within the block, the plan's folder is the one `plan.held` carries (but its report)."""
        if plan.held is None:
            return nullcontext()
        return self._state.holding(parent_dir(plan.plan_location), plan.held)

    def plan_folder(self, purge_id: str) -> str:
        # One folder per run chain: a later purge of the same snapshot never reads this one's objects.
        info = activity.info()
        return self._state.uri(purge_id, info.workflow_run_id or info.activity_id)

    def _plan_purge(
        self,
        step: PlanInput,
        announcing: bool = True,
        held: HeldFolder | None = None,
        resuming: bool = True,
    ) -> PlanSummary:
        request = step.request
        self._check_admitted(request.catalog)
        log.info("planning %s (%s)", step.purge_id, request.table_name)
        details = activity.info().heartbeat_details if resuming else ()
        plan_uri = f"{self.plan_folder(step.purge_id)}/plan.json"

        def beat(*checkpoint: object) -> None:
            # A checkpoint naming held objects would outlive them: none until they are flushed.
            self._heartbeat(*(checkpoint if held is None or held.flushed else ()))

        with configuration_faults_bounded(self._settings.config_fault_seconds):
            plan = build_plan(
                step.purge_id,
                request,
                io=_table_io(request),
                state=self._state,
                plan_uri=plan_uri,
                sizing=self._settings.sizing,
                checkpoint=PlanCheckpoint.model_validate(details[0]) if details else None,
                heartbeat=beat,
                announce=lambda ready: self._announce(request, ready) if announcing else None,
            )
        try:
            self._state.write(plan_uri, plan, compress=True)
        except OSError as error:
            raise ApplicationError(
                f"cannot write the plan to the state location {self._state.location}: {type(error).__name__}",
                type=ERROR_STATE_LOCATION,
            ) from None
        planned = _totals(plan)
        return PlanSummary(
            plan_location=plan_uri,
            chunk_count=len(plan.content_chunks),
            planned=planned,
            gc_enabled=plan.gc_enabled,
            engine=self._choose_engine(request.options.engine, plan.content_entries, plan.metadata_location),
            planning_counts=_foreign_counts(plan),
            unreadable_files=len(plan.unreadable),
            locations=plan.locations,
        )

    def _check_admitted(self, catalog: str) -> None:
        """Before anything is read: a snapshot from a catalog this worker neither knows nor was
        told to take would run without its live-table guard."""
        if self._admission is not None:
            admitted(self._admission, catalog)

    def _announce(self, request: PurgeRequest, ready: ReadyChunks) -> None:
        if self._signals is None:
            return
        engine = self._choose_engine(
            request.options.engine, ready.content_entries, request.snapshot_location()
        )
        self._signals.chunks_ready(
            ChunksReady(
                plan_location=ready.plan_location,
                chunks=ready.chunks,
                engine=engine,
                locations=ready.context.locations,
            )
        )

    @implements(CHUNK)
    def delete_content_chunk(self, step: ChunkInput) -> ChunkResult:
        with reporting_failed_attempts(self._signals, chunk_step(step.chunk_index)):
            return self._delete_content_chunk(step)

    def _delete_content_chunk(self, step: ChunkInput) -> ChunkResult:
        details = activity.info().heartbeat_details
        checkpoint = ChunkCheckpoint.model_validate(details[0]) if details else ChunkCheckpoint()
        return self.delete_chunk_from(step, checkpoint)

    def delete_chunk_from(
        self, step: ChunkInput, checkpoint: ChunkCheckpoint, signalling: bool = True
    ) -> ChunkResult:
        """From `checkpoint`, or from the chunk's own outcome object where that is further on.
        Without `signalling`, no progress signal: each is an event in the purge's history."""
        context = self._context(step.plan_location)
        files = self._chunk_files(step.plan_location, step.chunk_index)
        outcome_uri = chunk_outcome_uri(step.plan_location, step.chunk_index)
        options = step.request.options
        metrics = RequestMetrics(step.engine.value)
        started = time.monotonic()
        quiet = ProgressReport(1.0, None)
        with self._progress_report(step.chunk_index) if signalling else quiet as report:
            if step.engine == Engine.SPARK:
                outcome, stats = self._spark_engine().run_chunk(
                    context=context,
                    files=len(files),
                    plan_location=step.plan_location,
                    chunk_index=step.chunk_index,
                    request=step.request,
                    outcome_uri=outcome_uri,
                    heartbeat=self._heartbeat,
                    is_cancelled=activity.is_cancelled,
                    report=report,
                )
            else:

                def beat(checkpoint: ChunkCheckpoint) -> None:
                    self._heartbeat(checkpoint)
                    report(checkpoint.counts)

                outcome, stats = run_files(
                    files=files,
                    gc_enabled=context.gc_enabled,
                    locations=context.locations,
                    request=step.request,
                    state=self._state,
                    outcome_uri=outcome_uri,
                    tuning=self._settings.tuning,
                    heartbeat=beat,
                    checkpoint=checkpoint,
                    requests_per_second=task_share(options.bucket_requests_per_second, options.chunk_window),
                    observer=metrics.request_latency,
                )
        metrics.chunk_duration(time.monotonic() - started)
        return ChunkResult(
            chunk_index=step.chunk_index,
            counts=outcome.checkpoint.counts,
            failures_total=len(outcome.failures),
            failure_sample=outcome.failures[:FAILURE_SAMPLE_SIZE],
            delete_requests=stats.requests,
            throttled_requests=stats.throttled,
        )

    @implements(FINALIZE)
    def finalize_purge(self, step: FinalizeInput) -> FinalizeResult:
        with reporting_failed_attempts(self._signals, FINALIZE_ACTIVITY):
            return self._finalize_purge(step)

    def finalize_after(self, step: FinalizeInput, express: ExpressSteps) -> FinalizeResult:
        """Finalize for the express lane: its steps before are kept in the report object."""
        with reporting_failed_attempts(self._signals, FINALIZE_ACTIVITY):
            return self._finalize_purge(step, express)

    def express_record(self, plan_uri: str) -> FinishResult | None:
        """An express finish that completed before, its result lost: what it did, again."""
        report = written_report(self._state, plan_uri)
        if report is None or report.finalize is None or report.express is None:
            return None
        return FinishResult(**report.express.model_dump(), finalize=report.finalize)

    def _finalize_purge(self, step: FinalizeInput, express: ExpressSteps | None = None) -> FinalizeResult:
        raw = self._state.read(step.plan_location)
        if raw is None:
            done = finalized_before(self._state, step.plan_location)
            if done is None:
                raise ApplicationError(
                    f"plan object missing at {step.plan_location}; was the state location cleaned?",
                    type=ERROR_STATE_LOCATION,
                    non_retryable=True,
                )
            return done
        plan = Plan.model_validate_json(raw)
        options = step.request.options
        observer = RequestMetrics("local").request_latency
        with self._object_store(step.request, options.concurrency, observer) as store:
            result = finalize(
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
        with self._contexts_lock:
            self._contexts.pop(step.plan_location, None)
        return result

    def _progress_report(self, chunk_index: int) -> ProgressReport:
        if self._signals is None:
            return ProgressReport(1.0, None)
        return self._signals.for_chunk(chunk_index)

    def _spark_engine(self) -> SparkEngine:
        if self._spark is None:
            raise ApplicationError(
                "this worker has no Spark engine; set ICEPURGE_SPARK_MASTER on the workers",
                type=ERROR_ENGINE_UNAVAILABLE,
                non_retryable=True,
            )
        return self._spark

    def _choose_engine(self, requested: Engine, content_entries: int, location: str) -> Engine:
        """On the manifest lists' entry count, known before any manifest is read: chunks
        handed out early and the plan's last ones run on one engine."""
        if requested is Engine.SPARK:
            self._spark_engine()
            return Engine.SPARK
        if requested is Engine.AUTO and self._spark is not None:
            big = self._settings.auto_spark.picks_spark(location, content_entries)
            return Engine.SPARK if big else Engine.LOCAL
        return Engine.LOCAL

    def _object_store(
        self, request: PurgeRequest, concurrency: int, observer: LatencyObserver
    ) -> ObjectStore:
        return ObjectStore(
            request.file_io_properties,
            concurrency,
            replace(self._settings.tuning, check_existence=request.options.check_existence),
            # Finalize runs alone: it holds the whole budget.
            request.options.bucket_requests_per_second,
            observer,
        )

    def _chunk_files(self, plan_uri: str, chunk_index: int) -> list[ContentFile]:
        raw = self._required(content_chunk_uri(plan_uri, chunk_index), "chunk")
        return ContentChunk.model_validate_json(raw).files()

    def _required(self, uri: str, what: str) -> bytes:
        raw = self._state.read(uri)
        if raw is None:
            raise ApplicationError(
                f"{what} object missing at {uri}; was the state location cleaned?",
                type=ERROR_STATE_LOCATION,
                non_retryable=True,
            )
        return raw

    def _context(self, plan_uri: str) -> ChunkContext:
        with self._contexts_lock:
            if plan_uri in self._contexts:
                self._contexts.move_to_end(plan_uri)
                return self._contexts[plan_uri]
        context = read_chunk_context(self._state, plan_uri)
        if context is None:
            raise ApplicationError(
                f"neither chunk context nor plan object at {context_uri(plan_uri)}; "
                "was the state location cleaned?",
                type=ERROR_STATE_LOCATION,
                non_retryable=True,
            )
        with self._contexts_lock:
            self._contexts[plan_uri] = context
            while len(self._contexts) > _CONTEXT_CACHE_SIZE:
                self._contexts.popitem(last=False)
        return context


def _totals(plan: Plan) -> PlannedTotals:
    """Distinct files by kind, the foreign ones (skipped at planning) included."""
    foreign = Counter(Category(file.category) for file in plan.foreign_files)
    return PlannedTotals(
        content_files=sum(plan.content_chunks),
        manifests=len(plan.manifests) + foreign[Category.MANIFESTS],
        manifest_lists=len(plan.manifest_lists) + foreign[Category.MANIFEST_LISTS],
        metadata_files=len(plan.previous_metadata_files)
        + (1 if plan.current_metadata_file else 0)
        + foreign[Category.METADATA_FILES],
        statistics_files=len(plan.statistics_files) + foreign[Category.STATISTICS_FILES],
    )


def _foreign_counts(plan: Plan) -> FileCounts:
    counts = FileCounts()
    for file in plan.foreign_files:
        bucket = counts.of(Category(file.category))
        bucket.skipped[SkipReason.FOREIGN_LOCATION] = bucket.skipped.get(SkipReason.FOREIGN_LOCATION, 0) + 1
    return counts
