"""The catalog side of a purge, as workflow steps: load by name, drop, the live-table guard and
re-registration. Each is an activity, so each is durable: a crash between two repeats neither.

Deterministic: no I/O here, only activity calls and the contract models."""

from __future__ import annotations

from datetime import timedelta
from typing import TypeVar

from pydantic import BaseModel
from temporalio import workflow
from temporalio.common import RetryPolicy

from icepurge.contract.catalog_steps import (
    DropInput,
    DropResult,
    GuardInput,
    LoadedTable,
    RegisterInput,
    RegisterResult,
    TableRef,
    guard_not_applied,
)
from icepurge.contract.names import (
    DROP_TABLE_ACTIVITY,
    LIVE_TABLE_GUARD_ACTIVITY,
    LOAD_TABLE_ACTIVITY,
    REGISTER_TABLE_ACTIVITY,
)
from icepurge.contract.request import PurgeRequest
from icepurge.contract.status import GuardOutcome

Result = TypeVar("Result", bound=BaseModel)
# How a dry run's guard says it found what would stop the real purge.
PREVIEW_REFUSAL = "the real purge would be refused: "
# A catalog that doesn't answer is retried for about two minutes (each failed attempt shows in
# status.retrying), then the purge fails naming the catalog's last error.
CATALOG_RETRY = RetryPolicy(
    initial_interval=timedelta(seconds=1),
    backoff_coefficient=2.0,
    maximum_interval=timedelta(seconds=30),
    maximum_attempts=8,
)
# One catalog call each, which can't heartbeat: a worker that dies during one costs this long.
# Loading reads the metadata JSON too, which can be large.
LOAD_TIMEOUT = timedelta(seconds=60)
CATALOG_CALL_TIMEOUT = timedelta(seconds=30)
# The guard may list a whole catalog; it heartbeats per table.
GUARD_TIMEOUT = timedelta(minutes=30)
GUARD_HEARTBEAT = timedelta(seconds=15)


def resolved(request: PurgeRequest, loaded: LoadedTable) -> PurgeRequest:
    """A purge by name, once loaded, is a snapshot like any other; the caller's own FileIO
    properties win over the catalog's."""
    properties = {**loaded.file_io_properties, **request.file_io_properties}
    return request.model_copy(
        update={"metadata_location": loaded.metadata_location, "file_io_properties": properties}
    )


async def _catalog_step(
    name: str,
    argument: BaseModel,
    result_type: type[Result],
    timeout: timedelta = CATALOG_CALL_TIMEOUT,
    heartbeat: timedelta | None = None,
) -> Result:
    result: Result = await workflow.execute_activity(
        name,
        argument,
        result_type=result_type,
        start_to_close_timeout=timeout,
        heartbeat_timeout=heartbeat,
        retry_policy=CATALOG_RETRY,
    )
    return result


async def load_table(table: TableRef) -> LoadedTable:
    return await _catalog_step(LOAD_TABLE_ACTIVITY, table, LoadedTable, LOAD_TIMEOUT)


async def drop_table(table: TableRef, request: PurgeRequest) -> DropResult:
    step = DropInput(
        table=table,
        metadata_location=request.snapshot_location(),
        file_io_properties=request.file_io_properties,
    )
    return await _catalog_step(DROP_TABLE_ACTIVITY, step, DropResult)


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
    return await _catalog_step(LIVE_TABLE_GUARD_ACTIVITY, step, GuardOutcome, GUARD_TIMEOUT, GUARD_HEARTBEAT)


def previewed(outcome: GuardOutcome) -> GuardOutcome:
    """A dry run's guard: what it found, said as what the real purge would meet."""
    if outcome.passed:
        return outcome
    return outcome.model_copy(update={"detail": f"{PREVIEW_REFUSAL}{outcome.detail}"})


async def register_table(table: TableRef, metadata_location: str) -> RegisterResult:
    step = RegisterInput(table=table, metadata_location=metadata_location)
    return await _catalog_step(REGISTER_TABLE_ACTIVITY, step, RegisterResult)


def checking_existence(request: PurgeRequest) -> PurgeRequest:
    """Deletes that ask first whether each file is there: exact already_missing counts where a
    catalog deleted the storage on drop (a bulk delete calls a gone key deleted)."""
    options = request.options.model_copy(update={"check_existence": True})
    return request.model_copy(update={"options": options})
