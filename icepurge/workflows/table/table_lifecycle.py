"""The catalog side of a purge, as workflow steps: load by name, hold, drop, the live-table guard
and re-registration (or the hold's release). Each is an activity (the hold's first attempt a
local one, in the workflow task), so each is durable: a crash between two repeats neither.

Deterministic: no I/O here, only activity calls and the contract models."""

from __future__ import annotations

from datetime import timedelta

from temporalio import workflow

from icepurge.contract.activity_steps import (
    DROP_TABLE,
    HOLD_TABLE,
    LIVE_TABLE_GUARD,
    LOAD_TABLE,
    REGISTER_TABLE,
    RELEASE_HELD_TABLE,
)
from icepurge.contract.catalog_steps import (
    DropInput,
    DropResult,
    GuardInput,
    HeldTable,
    HoldInput,
    LoadedTable,
    RegisterInput,
    RegisterResult,
    ReleaseInput,
    TableRef,
    guard_not_applied,
)
from icepurge.contract.request import PurgeRequest
from icepurge.contract.status import GuardOutcome
from icepurge.workflows.shared.patches_first import decide_patches_first
from icepurge.workflows.shared.steps_runner import run_step, run_step_in_task_first
from icepurge.workflows.shared.upgrades import AFTER_HOLD_PATCHES, HOLD_IN_WORKFLOW_TASK

# A hold is a load and a rename (0.1-0.3 s here, about a second on a loaded machine). Longer, and
# the workflow, which answers no query meanwhile, moves it to an activity.
HOLD_IN_TASK_TIMEOUT = timedelta(seconds=10)
# How a dry run's guard says it found what would stop the real purge.
PREVIEW_REFUSAL = "the real purge would be refused: "


async def load_table(table: TableRef) -> LoadedTable:
    return await run_step(LOAD_TABLE, table)


async def drop_table(table: TableRef, request: PurgeRequest) -> DropResult:
    step = DropInput(
        table=table,
        metadata_location=request.snapshot_location(),
        file_io_properties=request.file_io_properties,
    )
    return await run_step(DROP_TABLE, step)


async def live_table_outcome(
    request: PurgeRequest, purge_id: str, locations: list[str], *, preview_of_drop: bool = False
) -> GuardOutcome:
    """What the live-table guard finds just before the first delete (or why it wasn't applied).
    `preview_of_drop`: a dry run of a purge by name, whose table is still in its catalog."""
    if not request.options.live_table_guard:
        return guard_not_applied("turned off by options.live_table_guard")
    step = GuardInput(
        table=TableRef.of(purge_id, request),
        metadata_location=request.snapshot_location(),
        locations=locations,
        scope=request.options.overlap_scope,
        skip_own_entry=preview_of_drop,
    )
    return await run_step(LIVE_TABLE_GUARD, step)


def previewed(outcome: GuardOutcome) -> GuardOutcome:
    """A dry run's guard: what it found, said as what the real purge would meet."""
    if outcome.passed:
        return outcome
    return outcome.model_copy(update={"detail": f"{PREVIEW_REFUSAL}{outcome.detail}"})


async def register_table(table: TableRef, metadata_location: str) -> RegisterResult:
    step = RegisterInput(table=table, metadata_location=metadata_location)
    return await run_step(REGISTER_TABLE, step)


def holds(request: PurgeRequest) -> str | None:
    """The namespace a purge by name holds its table in before planning it, if it does."""
    options = request.options
    return options.hold_namespace if request.by_name and not options.dry_run else None


async def hold_table(table: TableRef, hold_namespace: str) -> HeldTable:
    """First tried inside the workflow task; retried as an activity. Each attempt first looks for
    the run's held name, so one that follows an attempt whose rename landed late finds it held."""
    step = HoldInput(table=table, hold_namespace=hold_namespace)
    summary = f"hold {table.name} in {hold_namespace}"
    if workflow.patched(HOLD_IN_WORKFLOW_TASK):
        decide_patches_first(AFTER_HOLD_PATCHES)
        return await run_step_in_task_first(HOLD_TABLE, step, HOLD_IN_TASK_TIMEOUT, summary=summary)
    return await run_step(HOLD_TABLE, step, summary=summary)


async def release_held_table(held: HeldTable, table: TableRef) -> RegisterResult:
    step = ReleaseInput(held=held.held, table=table, metadata_location=held.loaded.metadata_location)
    return await run_step(RELEASE_HELD_TABLE, step)
