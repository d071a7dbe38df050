"""The express lane, as workflow steps: which purges take it, and its two activities
(icepurge.contract.express_steps) on either side of the drop. A small table purged by name costs
three activity round trips instead of six.

Deterministic: no I/O here, only activity calls and the contract models."""

from __future__ import annotations

from temporalio import workflow

from icepurge.contract.activity_steps import FINISH_SMALL_PURGE, LOAD_AND_PLAN
from icepurge.contract.express_steps import (
    FinishInput,
    FinishResult,
    LoadAndPlanInput,
    LoadedPlan,
    straight_through,
)
from icepurge.contract.request import PurgeRequest
from icepurge.contract.status import GuardOutcome
from icepurge.contract.steps import PlanSummary
from icepurge.workflows.steps_runner import run_step
from icepurge.workflows.upgrades import EXPRESS_LANE


def takes_express(request: PurgeRequest) -> bool:
    """A purge by name that goes straight from its plan to its deletes (straight_through)."""
    return request.by_name and straight_through(request.options) and workflow.patched(EXPRESS_LANE)


async def load_and_plan(purge_id: str, request: PurgeRequest) -> LoadedPlan:
    return await run_step(LOAD_AND_PLAN, LoadAndPlanInput(purge_id=purge_id, request=request))


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
