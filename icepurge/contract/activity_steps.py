"""Every activity, defined once: its name, input, result, timeouts and retries. Workflows call
them with icepurge.workflows.shared.steps_runner.run_step, activities implement them with
icepurge.activities.step_definition.implements; mypy checks both ends against these."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import Generic, TypeVar

from pydantic import BaseModel
from temporalio.common import RetryPolicy

from icepurge.contract import catalog_steps, express_steps, namespace_steps, steps
from icepurge.contract.batch_steps import RangeBatchInput, RangeBatchResult, TableBatchInput, TableBatchResult
from icepurge.contract.events import DeliveryReport, EventBatch
from icepurge.contract.names import (
    CHUNK_ACTIVITY,
    DELIVER_EVENTS_ACTIVITY,
    DROP_NAMESPACES_ACTIVITY,
    DROP_TABLE_ACTIVITY,
    ENUMERATE_ACTIVITY,
    FINALIZE_ACTIVITY,
    FINISH_SMALL_PURGE_ACTIVITY,
    HOLD_TABLE_ACTIVITY,
    LIVE_TABLE_GUARD_ACTIVITY,
    LOAD_AND_PLAN_ACTIVITY,
    LOAD_PLAN_AND_DROP_ACTIVITY,
    LOAD_TABLE_ACTIVITY,
    PLAN_ACTIVITY,
    PLAN_AND_FINISH_ACTIVITY,
    PURGE_RANGE_BATCH_ACTIVITY,
    PURGE_TABLE_BATCH_ACTIVITY,
    REGISTER_TABLE_ACTIVITY,
    RELEASE_HELD_TABLE_ACTIVITY,
    SWEEP_ACTIVITY,
    TABLE_PAGE_ACTIVITY,
)
from icepurge.contract.status import GuardOutcome
from icepurge.contract.sweep_steps import SweepInput, SweepResult

Input = TypeVar("Input", bound=BaseModel)
Result = TypeVar("Result", bound=BaseModel)


@dataclass(frozen=True)
class Step(Generic[Input, Result]):
    name: str
    input_type: type[Input]
    result_type: type[Result]
    timeout: timedelta
    retry: RetryPolicy
    heartbeat: timedelta | None = None
    # The activity beats every second from a thread of its own while it runs
    # (icepurge.activities.heartbeats.pulsing), beside its own beats.
    pulse: bool = False


# Transient faults are retried with backoff for as long as the step's own timeout allows; the
# step reports each failed attempt, so the retrying is visible.
TRANSIENT_RETRY = RetryPolicy(
    initial_interval=timedelta(seconds=1),
    backoff_coefficient=2.0,
    maximum_interval=timedelta(seconds=60),
)
# Long enough for one group of bulk deletes (or one metadata read or listing page) between
# heartbeats; short enough that a killed worker's step is picked up again quickly. Every long
# step checkpoints, so a retry resumes rather than starting over.
HEARTBEAT_TIMEOUT = timedelta(seconds=15)
# A catalog that doesn't answer is retried for about two minutes (each failed attempt shows in
# status.retrying), then the purge fails naming the catalog's last error.
CATALOG_RETRY = RetryPolicy(
    initial_interval=timedelta(seconds=1),
    backoff_coefficient=2.0,
    maximum_interval=timedelta(seconds=30),
    maximum_attempts=8,
)
# One catalog call each, which can't heartbeat: a slow catalog is waited for this long.
CATALOG_CALL_TIMEOUT = timedelta(seconds=30)
# Steps that drop, hold or register a table beat on a pulse meanwhile: a worker that dies inside
# one (the catalog acted, the purge has not recorded it: a caller is told "retry" meanwhile) is
# found dead after this, not after the call's whole timeout.
CATALOG_STEP_HEARTBEAT = timedelta(seconds=5)
# A killed worker's batch is picked up again after this; sinks heartbeat after each event.
DELIVERY_RETRY = RetryPolicy(
    initial_interval=timedelta(seconds=1), maximum_interval=timedelta(seconds=10), maximum_attempts=5
)

PLAN = Step(
    PLAN_ACTIVITY, steps.PlanInput, steps.PlanSummary, timedelta(hours=1), TRANSIENT_RETRY, HEARTBEAT_TIMEOUT
)
CHUNK = Step(
    CHUNK_ACTIVITY,
    steps.ChunkInput,
    steps.ChunkResult,
    timedelta(hours=2),
    TRANSIENT_RETRY,
    HEARTBEAT_TIMEOUT,
)
FINALIZE = Step(
    FINALIZE_ACTIVITY,
    steps.FinalizeInput,
    steps.FinalizeResult,
    timedelta(hours=1),
    TRANSIENT_RETRY,
    HEARTBEAT_TIMEOUT,
)
# Loading reads the metadata JSON too, which can be large.
LOAD_TABLE = Step(
    LOAD_TABLE_ACTIVITY,
    catalog_steps.TableRef,
    catalog_steps.LoadedTable,
    timedelta(seconds=60),
    CATALOG_RETRY,
)


def catalog_step(
    name: str, input_type: type[Input], result_type: type[Result], timeout: timedelta = CATALOG_CALL_TIMEOUT
) -> Step[Input, Result]:
    """A step that changes a table's catalog entry: retried as a catalog is, on a pulse."""
    return Step(name, input_type, result_type, timeout, CATALOG_RETRY, CATALOG_STEP_HEARTBEAT, pulse=True)


DROP_TABLE = catalog_step(DROP_TABLE_ACTIVITY, catalog_steps.DropInput, catalog_steps.DropResult)
REGISTER_TABLE = catalog_step(
    REGISTER_TABLE_ACTIVITY, catalog_steps.RegisterInput, catalog_steps.RegisterResult
)
# A load and a rename (and the hold namespace's creation, the first time): a few catalog calls.
HOLD_TABLE = catalog_step(
    HOLD_TABLE_ACTIVITY, catalog_steps.HoldInput, catalog_steps.HeldTable, timedelta(seconds=60)
)
RELEASE_HELD_TABLE = catalog_step(
    RELEASE_HELD_TABLE_ACTIVITY, catalog_steps.ReleaseInput, catalog_steps.RegisterResult
)
# The guard may list a whole catalog; it heartbeats per table.
LIVE_TABLE_GUARD = Step(
    LIVE_TABLE_GUARD_ACTIVITY,
    catalog_steps.GuardInput,
    GuardOutcome,
    timedelta(minutes=30),
    CATALOG_RETRY,
    timedelta(seconds=15),
)
ENUMERATE = Step(
    ENUMERATE_ACTIVITY,
    namespace_steps.EnumerateInput,
    namespace_steps.EnumerationSummary,
    timedelta(hours=2),
    TRANSIENT_RETRY,
    HEARTBEAT_TIMEOUT,
)
# A page is one read of the table list (cached per worker) and no heartbeat: a worker killed
# while reading one holds the namespace purge up for this long before the read is retried.
TABLE_PAGE = Step(
    TABLE_PAGE_ACTIVITY,
    namespace_steps.TablePageInput,
    namespace_steps.TablePage,
    timedelta(seconds=30),
    TRANSIENT_RETRY,
)
DROP_NAMESPACES = Step(
    DROP_NAMESPACES_ACTIVITY,
    namespace_steps.DropNamespacesInput,
    namespace_steps.DropNamespacesResult,
    timedelta(hours=1),
    TRANSIENT_RETRY,
    HEARTBEAT_TIMEOUT,
)
DELIVER_EVENTS = Step(
    DELIVER_EVENTS_ACTIVITY,
    EventBatch,
    DeliveryReport,
    timedelta(minutes=10),
    DELIVERY_RETRY,
    timedelta(seconds=10),
)
SWEEP = Step(SWEEP_ACTIVITY, SweepInput, SweepResult, timedelta(hours=6), TRANSIENT_RETRY, HEARTBEAT_TIMEOUT)
# The express lane. Loading and planning read only, so the step is retried like planning; the
# finish holds a small table's drop, guard, deletes and finalize, each idempotent on a retry.
LOAD_AND_PLAN = Step(
    LOAD_AND_PLAN_ACTIVITY,
    express_steps.LoadAndPlanInput,
    express_steps.LoadedPlan,
    timedelta(hours=1),
    TRANSIENT_RETRY,
    HEARTBEAT_TIMEOUT,
)
# Load and plan, then the drop, in one step: the plan is kept in the state location before the
# drop, so an attempt after a crash that dropped the table goes on from it. Its drop is a
# catalog step's (CATALOG_STEP_HEARTBEAT), and so, on the pulse, is its plan.
LOAD_PLAN_AND_DROP = Step(
    LOAD_PLAN_AND_DROP_ACTIVITY,
    express_steps.LoadAndPlanInput,
    express_steps.DroppedPlan,
    timedelta(hours=1),
    TRANSIENT_RETRY,
    CATALOG_STEP_HEARTBEAT,
    pulse=True,
)
FINISH_SMALL_PURGE = Step(
    FINISH_SMALL_PURGE_ACTIVITY,
    express_steps.FinishInput,
    express_steps.FinishResult,
    timedelta(hours=1),
    TRANSIENT_RETRY,
    HEARTBEAT_TIMEOUT,
)
# A small purge by snapshot: the plan step, then (the plan small enough) the finish, in one step.
# Planning is retried as the plan step is; an attempt after the plan was kept goes on from it.
PLAN_AND_FINISH = Step(
    PLAN_AND_FINISH_ACTIVITY,
    steps.PlanInput,
    express_steps.PlannedFinish,
    timedelta(hours=1),
    TRANSIENT_RETRY,
    HEARTBEAT_TIMEOUT,
)
# A batch of small tables: each table's steps are the express lane's, each idempotent on a retry,
# and each table's end is kept, so a retried batch answers for the tables it finished at once.
PURGE_TABLE_BATCH = Step(
    PURGE_TABLE_BATCH_ACTIVITY,
    TableBatchInput,
    TableBatchResult,
    timedelta(hours=1),
    TRANSIENT_RETRY,
    HEARTBEAT_TIMEOUT,
)
# The same batch named by its place in the table list, answering with counts (slim payloads).
PURGE_RANGE_BATCH = Step(
    PURGE_RANGE_BATCH_ACTIVITY,
    RangeBatchInput,
    RangeBatchResult,
    timedelta(hours=1),
    TRANSIENT_RETRY,
    HEARTBEAT_TIMEOUT,
)
