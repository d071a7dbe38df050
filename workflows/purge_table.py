"""The PurgeTable workflow: plan, delete content chunk by chunk, finalize, report.

Deterministic: no I/O, only the contract models; every side effect is an activity.
"""

from __future__ import annotations

import asyncio
from datetime import timedelta
from typing import Any

from pydantic import BaseModel, ConfigDict
from temporalio import workflow
from temporalio.common import RetryPolicy
from temporalio.exceptions import ActivityError, ApplicationError, CancelledError

from workflows.constants import (
    CHUNK_ACTIVITY,
    CHUNK_PROGRESS_SIGNAL,
    ERROR_INVALID_REQUEST,
    FINALIZE_ACTIVITY,
    PLAN_ACTIVITY,
    STATUS_QUERY,
    WORKFLOW_TYPE,
)
from workflows.progress import Progress
from workflows.request import PurgeRequest
from workflows.search_attributes import identity_updates, progress_updates
from workflows.status import PurgeReport, PurgeState, PurgeStatus
from workflows.steps import (
    ChunkInput,
    ChunkProgress,
    ChunkResult,
    FinalizeInput,
    FinalizeResult,
    PlanInput,
    PlanSummary,
)
from workflows.validation import InvalidPurgeRequestError, parse_request

TRANSIENT_RETRY = RetryPolicy(
    initial_interval=timedelta(seconds=1),
    backoff_coefficient=2.0,
    maximum_interval=timedelta(seconds=60),
)
# Long enough for one manifest's bulk deletes between heartbeats; short enough that a killed
# worker's chunk is picked up again quickly.
HEARTBEAT_TIMEOUT = timedelta(seconds=15)


class CarriedState(BaseModel):
    """What one run hands to the next through continue-as-new: small, whatever the table."""

    model_config = ConfigDict(extra="forbid")

    status: PurgeStatus
    plan: PlanSummary
    next_chunk: int


@workflow.defn(name=WORKFLOW_TYPE)
class PurgeTableWorkflow:
    def __init__(self) -> None:
        self._progress: Progress | None = None

    @workflow.query(name=STATUS_QUERY)
    def status(self) -> PurgeStatus:
        if self._progress is None:
            raise ApplicationError("the purge has not started yet; query again in a moment")
        return self._progress.status

    @workflow.signal(name=CHUNK_PROGRESS_SIGNAL)
    def chunk_progress(self, update: ChunkProgress) -> None:
        if self._progress is not None:
            self._progress.chunk_progress(update.chunk_index, update.counts, workflow.now())

    @workflow.run
    async def run(self, request: dict[str, Any], carried: CarriedState | None = None) -> PurgeReport:
        try:
            parsed = parse_request(request)
        except InvalidPurgeRequestError as error:
            raise ApplicationError(str(error), type=ERROR_INVALID_REQUEST, non_retryable=True) from None
        status = carried.status if carried else self._new_status(parsed)
        workflow.upsert_search_attributes([*identity_updates(parsed), *progress_updates(status)])
        progress = self._progress = Progress(status, _publish)
        if carried:
            progress.status.run_count += 1
        try:
            plan = carried.plan if carried else await self._plan(parsed, progress)
            next_chunk = carried.next_chunk if carried else 0
            next_chunk = await self._delete_chunks(parsed, plan, next_chunk, progress)
            if next_chunk < plan.chunk_count:
                self._continue(request, progress, plan, next_chunk)
            return await self._finalize(parsed, plan, progress)
        except ActivityError as error:
            if isinstance(error.cause, CancelledError):
                progress.move_to(PurgeState.CANCELLED, workflow.now())
                raise
            reason = _failure_reason(error)
            error_type = _failure_type(error)
            progress.failed(reason, error_type, workflow.now())
            raise ApplicationError(reason, type=error_type, non_retryable=True) from None
        except asyncio.CancelledError:
            progress.move_to(PurgeState.CANCELLED, workflow.now())
            raise

    def _new_status(self, request: PurgeRequest) -> PurgeStatus:
        now = workflow.now()
        return PurgeStatus(
            purge_id=workflow.info().workflow_id,
            state=PurgeState.PENDING,
            catalog=request.catalog,
            namespace=request.namespace,
            table=request.table,
            metadata_location=request.metadata_location,
            requested_by=request.requested_by,
            request_id=request.request_id,
            dry_run=request.options.dry_run,
            engine=request.options.engine.value,
            started_at=now,
            updated_at=now,
        )

    async def _plan(self, request: PurgeRequest, progress: Progress) -> PlanSummary:
        progress.move_to(PurgeState.PLANNING, workflow.now())
        plan: PlanSummary = await workflow.execute_activity(
            PLAN_ACTIVITY,
            PlanInput(purge_id=progress.status.purge_id, request=request),
            result_type=PlanSummary,
            start_to_close_timeout=timedelta(hours=1),
            heartbeat_timeout=timedelta(minutes=2),
            retry_policy=TRANSIENT_RETRY,
        )
        progress.planned(plan, workflow.now())
        return plan

    async def _delete_chunks(
        self, request: PurgeRequest, plan: PlanSummary, next_chunk: int, progress: Progress
    ) -> int:
        """Runs chunks in a sliding window; returns the first chunk not yet run, which is below
        the chunk count when the run should continue as new first."""
        progress.move_to(PurgeState.DELETING, workflow.now())
        in_flight: set[asyncio.Task[ChunkResult]] = set()
        window = request.options.chunk_window
        while True:
            suggested = workflow.info().is_continue_as_new_suggested()
            while len(in_flight) < window and next_chunk < plan.chunk_count and not suggested:
                progress.chunk_started(next_chunk)
                in_flight.add(asyncio.ensure_future(self._chunk(request, plan, next_chunk, progress)))
                next_chunk += 1
            if not in_flight:
                return next_chunk
            try:
                done, _ = await workflow.wait(in_flight, return_when=asyncio.FIRST_COMPLETED)
            except asyncio.CancelledError:
                await _cancel_all(in_flight)
                raise
            for task in done:
                in_flight.discard(task)
                progress.chunk_done(task.result(), workflow.now())

    async def _chunk(
        self, request: PurgeRequest, plan: PlanSummary, index: int, progress: Progress
    ) -> ChunkResult:
        result: ChunkResult = await workflow.execute_activity(
            CHUNK_ACTIVITY,
            ChunkInput(
                purge_id=progress.status.purge_id,
                request=request,
                plan_location=plan.plan_location,
                chunk_index=index,
                engine=plan.engine,
            ),
            result_type=ChunkResult,
            start_to_close_timeout=timedelta(hours=2),
            heartbeat_timeout=HEARTBEAT_TIMEOUT,
            retry_policy=TRANSIENT_RETRY,
            cancellation_type=workflow.ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
            summary=f"chunk {index + 1}/{plan.chunk_count}",
        )
        return result

    def _continue(
        self, request: dict[str, Any], progress: Progress, plan: PlanSummary, next_chunk: int
    ) -> None:
        carried = CarriedState(status=progress.status, plan=plan, next_chunk=next_chunk)
        workflow.continue_as_new(args=[request, carried])

    async def _finalize(self, request: PurgeRequest, plan: PlanSummary, progress: Progress) -> PurgeReport:
        progress.move_to(PurgeState.FINALIZING, workflow.now())
        status = progress.status
        result: FinalizeResult = await workflow.execute_activity(
            FINALIZE_ACTIVITY,
            FinalizeInput(
                purge_id=status.purge_id,
                request=request,
                plan_location=plan.plan_location,
                chunk_count=plan.chunk_count,
                keep_metadata_chain=status.failures_total > 0,
                counts_so_far=status.counts,
            ),
            result_type=FinalizeResult,
            start_to_close_timeout=timedelta(hours=1),
            heartbeat_timeout=timedelta(minutes=2),
            retry_policy=TRANSIENT_RETRY,
        )
        now = workflow.now()
        progress.finalized(result, now)
        status.report_location = result.report_location
        final = PurgeState.SUCCEEDED_WITH_ERRORS if status.failures_total else PurgeState.SUCCEEDED
        progress.move_to(final, now)
        started = status.started_at or now
        return PurgeReport(status=status, duration_seconds=(now - started).total_seconds())


def _publish(status: PurgeStatus) -> None:
    workflow.upsert_search_attributes(progress_updates(status))


async def _cancel_all(chunks: set[asyncio.Task[ChunkResult]]) -> None:
    """Waiting on chunks doesn't cancel them: without this a cancelled purge would close while
    its chunk activities, never told, went on deleting."""
    for chunk in chunks:
        chunk.cancel()
    await asyncio.gather(*chunks, return_exceptions=True)


def _failure_reason(error: ActivityError) -> str:
    cause = error.cause
    return str(cause) if cause is not None else str(error)


def _failure_type(error: ActivityError) -> str | None:
    cause = error.cause
    return cause.type if isinstance(cause, ApplicationError) else None
