"""Planning a purge: the plan built from the table's metadata, kept in the state location (or
held in memory for a plan the express finish takes at once), and the engine its chunks run on.
The plan step, the express lane and a batch's tables all plan here."""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext

from pyiceberg.io import FileIO
from temporalio import activity
from temporalio.exceptions import ApplicationError

from icepurge.activities.catalog.catalog_calls import admitted
from icepurge.activities.plan.config_faults import configuration_faults_bounded
from icepurge.activities.plan.plan_model import Plan, PlanCheckpoint
from icepurge.activities.plan.planner import PlanBuild, ReadyChunks, build_plan
from icepurge.activities.settings import ActivitySettings, StepContext
from icepurge.activities.signals.attempt_reports import reporting_failed_attempts
from icepurge.catalogs.admission import CatalogAdmission
from icepurge.catalogs.locations import parent_dir
from icepurge.contract.counts import Category, FileCounts, SkipReason
from icepurge.contract.express_steps import finishes_at_once, snapshot_at_once
from icepurge.contract.names import ERROR_STATE_LOCATION, PLAN_ACTIVITY, PLAN_AND_FINISH_ACTIVITY
from icepurge.contract.request import Engine, PurgeRequest
from icepurge.contract.status import PlannedTotals
from icepurge.contract.steps import ChunksReady, PlanInput, PlanSummary
from icepurge.state.held_state import HeldFolder
from icepurge.stores.deferred_file_io import DeferredFileIO

log = logging.getLogger(__name__)
EngineChoice = Callable[[Engine, int, str], Engine]


def _table_io(request: PurgeRequest) -> FileIO:
    return DeferredFileIO(request.file_io_properties, request.snapshot_location())


class Planning:
    def __init__(
        self,
        settings: ActivitySettings,
        context: StepContext,
        choose_engine: EngineChoice,
        admission: CatalogAdmission | None,
    ) -> None:
        """`choose_engine`: the engine a plan's chunks run on, from the requested one, the
        manifest lists' entry count and the table's location (the worker's ChunkEngines.choose)."""
        self._settings = settings
        self._choose_engine = choose_engine
        self._signals = context.signals
        # None: every catalog name is taken (tools that plan without a worker).
        self._admission = admission
        self._heartbeat = context.heartbeat
        self._state = context.state

    def plan(self, step: PlanInput) -> PlanSummary:
        """The plan step's: resumed from its checkpoint, chunks announced as they are ready."""
        with reporting_failed_attempts(self._signals, PLAN_ACTIVITY):
            return self._planned(step)[1]

    def plan_quietly(self, step: PlanInput) -> PlanSummary:
        """Planning for a purge that deletes only once its plan is done: no chunk is announced
        early (each announcement is a signal, an event in the purge's history). A plan the
        express finish takes at once is held in memory and handed over in the summary (`held`);
        a bigger one reaches the state location. An attempt after one that checkpointed resumes
        from the objects that checkpoint names, so it holds nothing."""
        with reporting_failed_attempts(self._signals, PLAN_ACTIVITY):
            if activity.info().heartbeat_details:
                return self._planned(step, announcing=False)[1]
            return self.plan_held(step)

    def plan_held(self, step: PlanInput) -> PlanSummary:
        """plan_quietly from the start, never from a checkpoint: for a caller whose heartbeats
        are not this plan's alone (a batch of tables)."""
        with self._state.holding(self.plan_folder(step.purge_id)) as held:
            _, summary = self._planned(step, announcing=False, held=held, resuming=False)
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

    def plan_small_at_once(self, step: PlanInput) -> tuple[PlanSummary, bool]:
        """The plan step's planning for plan_and_finish_small, and whether that step finishes the
        plan at once (snapshot_at_once): such a plan announces no chunk, since no workflow runs
        its chunks. An attempt after one that kept the plan takes that plan up again."""
        with reporting_failed_attempts(self._signals, PLAN_AND_FINISH_ACTIVITY):
            raw = self._state.read(self.plan_uri(step.purge_id)) if activity.info().attempt > 1 else None
            if raw is not None:
                plan = Plan.model_validate_json(raw)
                summary = self._summary(step.request, self.plan_uri(step.purge_id), plan)
            else:

                def announcing(ready: ReadyChunks) -> bool:
                    engine = self._engine_of(step.request, ready.content_entries)
                    return not snapshot_at_once(ready.content_entries, engine)

                plan, summary = self._planned(step, announcing=announcing)
            return summary, snapshot_at_once(plan.content_entries, summary.engine)

    def plan_uri(self, purge_id: str) -> str:
        return f"{self.plan_folder(purge_id)}/plan.json"

    def _engine_of(self, request: PurgeRequest, content_entries: int) -> Engine:
        return self._choose_engine(request.options.engine, content_entries, request.snapshot_location())

    def _planned(
        self,
        step: PlanInput,
        announcing: bool | Callable[[ReadyChunks], bool] = True,
        held: HeldFolder | None = None,
        resuming: bool = True,
    ) -> tuple[Plan, PlanSummary]:
        """`announcing`: whether chunks are announced as they are ready, or which are."""
        request = step.request
        if self._admission is not None:
            # Before anything is read: a snapshot from a catalog this worker neither knows nor
            # was told to take would run without its live-table guard.
            admitted(self._admission, request.catalog)
        log.info("planning %s (%s)", step.purge_id, request.table_name)
        details = activity.info().heartbeat_details if resuming else ()
        plan_uri = self.plan_uri(step.purge_id)

        def beat(*checkpoint: object) -> None:
            # A checkpoint naming held objects would outlive them: none until they are flushed.
            self._heartbeat(*(checkpoint if held is None or held.flushed else ()))

        with configuration_faults_bounded(self._settings.config_fault_seconds):
            plan = build_plan(
                PlanBuild(
                    purge_id=step.purge_id,
                    request=request,
                    io=_table_io(request),
                    state=self._state,
                    plan_uri=plan_uri,
                    sizing=self._settings.sizing,
                    checkpoint=PlanCheckpoint.model_validate(details[0]) if details else None,
                    heartbeat=beat,
                    announce=lambda ready: self._announce(request, ready, announcing),
                    retried=resuming and activity.info().attempt > 1,
                )
            )
        try:
            self._state.write(plan_uri, plan, compress=True)
        except OSError as error:
            raise ApplicationError(
                f"cannot write the plan to the state location {self._state.location}: {type(error).__name__}",
                type=ERROR_STATE_LOCATION,
            ) from None
        return plan, self._summary(request, plan_uri, plan)

    def _summary(self, request: PurgeRequest, plan_uri: str, plan: Plan) -> PlanSummary:
        return PlanSummary(
            plan_location=plan_uri,
            chunk_count=len(plan.content_chunks),
            planned=_totals(plan),
            gc_enabled=plan.gc_enabled,
            engine=self._choose_engine(request.options.engine, plan.content_entries, plan.metadata_location),
            planning_counts=_foreign_counts(plan),
            unreadable_files=len(plan.unreadable),
            locations=plan.locations,
        )

    def _announce(
        self, request: PurgeRequest, ready: ReadyChunks, announcing: bool | Callable[[ReadyChunks], bool]
    ) -> None:
        wanted = announcing(ready) if callable(announcing) else announcing
        if self._signals is None or not wanted:
            return
        engine = self._engine_of(request, ready.content_entries)
        self._signals.chunks_ready(
            ChunksReady(
                plan_location=ready.plan_location,
                chunks=ready.chunks,
                engine=engine,
                locations=ready.context.locations,
            )
        )


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
