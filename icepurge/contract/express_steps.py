"""Inputs and outputs of the express lane: a small table purged by name takes three activities
instead of six or more. The first loads and plans; the drop stays a step of its own, so its
answer (a front door's 204) never waits for deletes; the last guards, deletes and finalizes. A
small purge by snapshot takes one: plan, guard, deletes and finalize."""

from __future__ import annotations

from pydantic import Field

from icepurge.contract.catalog_steps import LoadedTable, TableRef
from icepurge.contract.request import Engine, PurgeOptions, PurgeRequest
from icepurge.contract.status import GuardOutcome
from icepurge.contract.steps import ChunkResult, FinalizeResult, PlanSummary
from icepurge.contract.strict_model import StrictModel


class LoadAndPlanInput(StrictModel):
    purge_id: str
    request: PurgeRequest
    held_at: TableRef | None = Field(
        None, description="options.hold_namespace: where the table is held, loaded and dropped from there."
    )


class LoadedPlan(StrictModel):
    loaded: LoadedTable | None = Field(description="The snapshot loaded by name; None for a snapshot purge.")
    plan: PlanSummary


class DroppedPlan(StrictModel):
    """load_plan_and_drop's answer: the table is out of its catalog, its plan made before."""

    loaded: LoadedTable
    plan: PlanSummary
    storage_gone: bool = Field(description="The catalog deleted the table's storage when it dropped it.")


class FinishInput(StrictModel):
    purge_id: str
    request: PurgeRequest = Field(description="Resolved: a purge by name carries its loaded snapshot.")
    plan: PlanSummary
    guards: list[GuardOutcome] = Field(default_factory=list, description="The guards met so far.")


class ExpressSteps(StrictModel):
    """What the finish did before finalize: kept in the purge's report object too, so a finish
    retried after it completed (its result lost with its worker) answers the same again."""

    guard: GuardOutcome
    chunks: list[ChunkResult] = Field(default_factory=list)
    plan: PlanSummary | None = Field(
        None,
        description="The plan the finish took (never `held`): a purge by snapshot planned in the same "
        "step, so its retry after the finish completed answers with the plan too.",
    )


class FinishResult(ExpressSteps):
    """Each step's own result, as the step-by-step path would have recorded them. A guard that
    refused leaves chunks and finalize unset: nothing was deleted."""

    finalize: FinalizeResult | None = None


# At most this many files for a plan the finish takes at once, ~0.2 s of bulk deletes here: a
# pause, a budget change or a cancel takes hold between steps, and this keeps the wait short.
EXPRESS_MAX_FILES = 1_000


def finishes_at_once(plan: PlanSummary) -> bool:
    return plan.planned.files <= EXPRESS_MAX_FILES and plan.engine is Engine.LOCAL


class PlannedFinish(StrictModel):
    """plan_and_finish_small's answer: the plan, and the finish when the plan was small enough to
    take at once (else the purge goes on step by step from the plan)."""

    plan: PlanSummary
    finish: FinishResult | None = None


# A purge by snapshot whose manifests list at most this many entries (so at most this many content
# files) plans, guards, deletes and finalizes in one step: ~2 s of deletes here, during which a
# pause or a budget change waits. Entries, not files: the manifest lists give them before planning
# reads a manifest, so whether the step announces chunks (to a workflow that would run them) or
# deletes them itself is known before the first chunk, the same on every attempt.
SNAPSHOT_AT_ONCE_MAX_ENTRIES = 10_000


def snapshot_at_once(content_entries: int, engine: Engine) -> bool:
    return content_entries <= SNAPSHOT_AT_ONCE_MAX_ENTRIES and engine is Engine.LOCAL


def straight_through(options: PurgeOptions) -> bool:
    """Options under which a purge by name goes straight from its plan to its deletes. Those that
    wait between (a soft-delete window, a caller's drop), rehearse (dry run), drop before planning,
    sweep or run on Spark keep the step-by-step path, which shows each stage."""
    return (
        options.express_lane
        and not options.dry_run
        and not options.purge_after_seconds
        and not options.await_drop_seconds
        and not options.drop_before_plan
        and not options.sweep_location
        and options.engine is not Engine.SPARK
    )
