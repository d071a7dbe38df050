"""The express lane's activities (icepurge.contract.express_steps): the step-by-step path's own
steps, run back to back inside one activity each, so a small table costs two activity round trips
instead of six (load_plan_and_drop, finish_small_purge; load_and_plan for purges started before
the drop joined the plan), and a small purge by snapshot one (plan_and_finish_small). Every step
keeps its own checkpoints and its idempotent retry."""

from __future__ import annotations

from temporalio import activity
from temporalio.exceptions import ApplicationError

from icepurge.activities.catalog.catalog_retries import bounded
from icepurge.activities.catalog.planned_drop import DropAttempt, PlannedDrops, TableChangedError
from icepurge.activities.catalog.table_catalog import TableCatalog
from icepurge.activities.purge.express_finish import ExpressFinish
from icepurge.activities.purge.purge_services import PurgeServices
from icepurge.activities.step_definition import implements
from icepurge.contract.activity_steps import (
    FINISH_SMALL_PURGE,
    LOAD_AND_PLAN,
    LOAD_PLAN_AND_DROP,
    PLAN_AND_FINISH,
)
from icepurge.contract.catalog_steps import (
    TableRef,
    resolved,
)
from icepurge.contract.express_steps import (
    DroppedPlan,
    FinishInput,
    FinishResult,
    LoadAndPlanInput,
    LoadedPlan,
    PlannedFinish,
)
from icepurge.contract.names import ERROR_TABLE_CHANGED
from icepurge.contract.steps import PlanInput


class ExpressActivities:
    def __init__(self, services: PurgeServices, catalogs: TableCatalog, drops: PlannedDrops) -> None:
        self._planning = services.planning
        self._finalizing = services.finalizing
        self._catalogs = catalogs
        self._drops = drops
        self._finish = ExpressFinish(services, catalogs)

    @implements(LOAD_PLAN_AND_DROP)
    def load_plan_and_drop(self, step: LoadAndPlanInput) -> DroppedPlan:
        """A purge by name up to its drop, with no workflow task between the plan and the drop
        (the front door's answer waits for both). An attempt after one that kept its plan and
        dropped the table goes on from what it kept."""
        try:
            attempt = DropAttempt(
                step.held_at or TableRef.of(step.purge_id, step.request),
                step.request,
                self._planning.plan_folder(step.purge_id),
                retried=activity.info().attempt > 1,
            )
            dropped = self._drops.run(attempt, self._planning.plan_quietly)
        except TableChangedError as changed:
            raise ApplicationError(
                f"{changed.why}; nothing was dropped or deleted: purge it by name again",
                type=ERROR_TABLE_CHANGED,
                non_retryable=True,
            ) from None
        return DroppedPlan(loaded=dropped.loaded, plan=dropped.kept.plan, storage_gone=dropped.storage_gone)

    @implements(LOAD_AND_PLAN)
    def load_and_plan(self, step: LoadAndPlanInput) -> LoadedPlan:
        """Reads only: a retry (or a crash) costs a second read, never a drop."""
        request = step.request
        loaded = None
        if request.by_name:
            ref = TableRef.of(step.purge_id, request)
            loaded = bounded(lambda: self._catalogs.load(ref, {}))
            request = resolved(request, loaded)
        plan = self._planning.plan_quietly(PlanInput(purge_id=step.purge_id, request=request))
        return LoadedPlan(loaded=loaded, plan=plan)

    @implements(FINISH_SMALL_PURGE)
    def finish_small_purge(self, step: FinishInput) -> FinishResult:
        """Guard, the chunks, finalize, once the table is dropped. A retry redoes each: the chunks
        resume from their outcome objects, finalize from its own; after a finalize that completed,
        the report object answers."""
        return self._finish.finish(step)

    @implements(PLAN_AND_FINISH)
    def plan_and_finish_small(self, step: PlanInput) -> PlannedFinish:
        """A purge by snapshot: the plan step, then, for a plan small enough, the finish. The plan
        is kept in the state location before the first delete: a retry takes it up from there
        (the table's manifests may be gone by then), or, after the finish completed, answers
        from the report object."""
        if activity.info().attempt > 1:
            done = self._finalizing.express_record(self._planning.plan_uri(step.purge_id))
            if done is not None and done.plan is not None:
                return PlannedFinish(plan=done.plan, finish=done)
        plan, at_once = self._planning.plan_small_at_once(step)
        if not at_once:
            return PlannedFinish(plan=plan)
        finish = self._finish.finish(FinishInput(purge_id=step.purge_id, request=step.request, plan=plan))
        return PlannedFinish(plan=plan, finish=finish)
