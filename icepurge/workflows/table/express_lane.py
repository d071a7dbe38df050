"""The express lane, as workflow steps: which purges take it, and its activities
(icepurge.contract.express_steps): load, plan and drop in one, then the finish. A small table
purged by name costs two activity round trips instead of six (three for purges started before
the drop joined the plan's step); a small purge by snapshot, one.

Deterministic: no I/O here, only activity calls and the contract models."""

from __future__ import annotations

from temporalio import workflow

from icepurge.contract.activity_steps import (
    FINISH_SMALL_PURGE,
    LOAD_AND_PLAN,
    LOAD_PLAN_AND_DROP,
    PLAN_AND_FINISH,
)
from icepurge.contract.catalog_steps import TableRef
from icepurge.contract.express_steps import (
    DroppedPlan,
    FinishInput,
    FinishResult,
    LoadAndPlanInput,
    LoadedPlan,
    PlannedFinish,
    straight_through,
)
from icepurge.contract.request import PurgeRequest
from icepurge.contract.status import GuardOutcome
from icepurge.contract.steps import PlanInput, PlanSummary
from icepurge.workflows.shared.steps_runner import run_step
from icepurge.workflows.shared.upgrades import DROP_WITH_PLAN, EXPRESS_LANE, SNAPSHOT_AT_ONCE


def takes_express(request: PurgeRequest) -> bool:
    """A purge by name that goes straight from its plan to its deletes (straight_through)."""
    return request.by_name and straight_through(request.options) and workflow.patched(EXPRESS_LANE)


def takes_snapshot_at_once(request: PurgeRequest) -> bool:
    """A purge by snapshot that goes straight from its plan to its deletes (straight_through):
    planned by plan_and_finish_small, which finishes it too when its plan is small. One with a
    request budget keeps every step: a budget can make even a small purge long, and a change to
    it takes hold between steps."""
    return (
        not request.by_name
        and straight_through(request.options)
        and request.options.bucket_requests_per_second is None
        and workflow.patched(SNAPSHOT_AT_ONCE)
    )


async def plan_and_finish(step: PlanInput) -> PlannedFinish:
    return await run_step(
        PLAN_AND_FINISH,
        step,
        cancellation_type=workflow.ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
        summary="plan; if small, guard, delete and finalize",
    )


async def load_and_plan(purge_id: str, request: PurgeRequest) -> LoadedPlan:
    return await run_step(LOAD_AND_PLAN, LoadAndPlanInput(purge_id=purge_id, request=request))


def drops_with_plan() -> bool:
    """An express purge started after the drop joined the plan's step (load_plan_and_drop)."""
    return workflow.patched(DROP_WITH_PLAN)


async def load_plan_and_drop(purge_id: str, request: PurgeRequest, held_at: TableRef | None) -> DroppedPlan:
    """`held_at`: where the table is held (options.hold_namespace), planned and dropped from there."""
    return await run_step(
        LOAD_PLAN_AND_DROP,
        LoadAndPlanInput(purge_id=purge_id, request=request, held_at=held_at),
        summary=f"load, plan and drop {request.table_name}",
    )


async def finish_small(
    purge_id: str, request: PurgeRequest, plan: PlanSummary, guards: list[GuardOutcome]
) -> FinishResult:
    step = FinishInput(purge_id=purge_id, request=request, plan=plan, guards=guards)
    return await run_step(
        FINISH_SMALL_PURGE,
        step,
        cancellation_type=workflow.ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
        summary=f"guard, delete and finalize {plan.planned.files} files",
    )
