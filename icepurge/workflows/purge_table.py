"""The PurgeTable workflow: (load and) plan, (drop, wait out a soft delete, guard,) delete
content chunk by chunk, finalize, report.

Deterministic: no I/O, only the contract models; every side effect is an activity.
"""

from __future__ import annotations

import asyncio
from datetime import timedelta
from functools import partial
from typing import Any, NoReturn

from pydantic import BaseModel, ConfigDict
from temporalio import workflow
from temporalio.exceptions import ActivityError, ApplicationError, CancelledError

from icepurge.contract.activity_steps import CHUNK, FINALIZE, PLAN
from icepurge.contract.catalog_steps import TableRef, guard_not_applied
from icepurge.contract.controls import (
    RateBudgetChange,
    TableControl,
    check_pause,
    check_rate_budget,
    check_resume,
)
from icepurge.contract.events import EventCursor, EventKind, TableEvents
from icepurge.contract.names import (
    CHUNK_PROGRESS_SIGNAL,
    CHUNKS_READY_SIGNAL,
    DROP_TABLE_ACTIVITY,
    ERROR_INVALID_REQUEST,
    ERROR_LIVE_TABLE,
    EXPEDITE_UPDATE,
    FINALIZE_ACTIVITY,
    LIVE_TABLE_GUARD_ACTIVITY,
    LOAD_TABLE_ACTIVITY,
    NAMESPACE_CONTROL_SIGNAL,
    PAUSE_UPDATE,
    PLAN_ACTIVITY,
    RATE_BUDGET_UPDATE,
    RESUME_UPDATE,
    STATUS_QUERY,
    STEP_RETRYING_SIGNAL,
    UNDROP_UPDATE,
    WORKFLOW_TYPE,
)
from icepurge.contract.request import PurgeRequest
from icepurge.contract.search_attributes import identity_updates, progress_updates, scheduled_update
from icepurge.contract.status import TERMINAL_STATES, PurgeReport, PurgeState, PurgeStatus, RetryingStep
from icepurge.contract.steps import (
    ChunkInput,
    ChunkProgress,
    ChunkResult,
    ChunksReady,
    FinalizeInput,
    FinalizeResult,
    PlanInput,
    PlanSummary,
    StepAttemptFailed,
    chunk_step,
)
from icepurge.contract.validation import InvalidPurgeRequestError, parse_request
from icepurge.workflows.chunk_window import ChunkTarget, ChunkWindow
from icepurge.workflows.details import details_markdown
from icepurge.workflows.event_stream import EventStream
from icepurge.workflows.location_sweep import sweep_location
from icepurge.workflows.metrics import record_step
from icepurge.workflows.progress import Progress
from icepurge.workflows.soft_delete import SoftDeleteWindow
from icepurge.workflows.step_outcomes import (
    PurgeRefusedError,
    cancel_all,
    control_guard,
    error_memo,
    failure_reason,
    failure_type,
    settled,
)
from icepurge.workflows.steps_runner import run_step
from icepurge.workflows.table_lifecycle import (
    checking_existence,
    drop_table,
    live_table_outcome,
    load_table,
    previewed,
    register_table,
    resolved,
)
from icepurge.workflows.upgrades import PREVIEW_GUARDS


class CarriedState(BaseModel):
    """What one run hands to the next through continue-as-new: small, whatever the table."""

    model_config = ConfigDict(extra="forbid")

    status: PurgeStatus
    plan: PlanSummary
    next_chunk: int
    events: EventCursor


@workflow.defn(name=WORKFLOW_TYPE)
class PurgeTableWorkflow:
    def __init__(self) -> None:
        self._progress: Progress | None = None
        self._events: EventStream | None = None
        self._request: PurgeRequest | None = None
        # Set by pause and by a budget change: the running chunks stop and start again later.
        self._interrupt = False
        self._window = SoftDeleteWindow()
        # A namespace purge's control that came before this run had a status to apply it to.
        self._early_control: TableControl | None = None
        self._chunks = ChunkWindow(self._chunk, self._chunk_started, self._chunk_done)
        self._target: ChunkTarget | None = None
        # The most chunks planning has announced, while it runs.
        self._ready: ChunksReady | None = None
        self._guarded = False

    @workflow.query(name=STATUS_QUERY)
    def status(self) -> PurgeStatus:
        return self._status()

    @workflow.signal(name=CHUNK_PROGRESS_SIGNAL)
    def chunk_progress(self, update: ChunkProgress) -> None:
        if self._progress is not None and self._events is not None:
            self._progress.chunk_progress(update.chunk_index, update.counts, workflow.now())
            workflow.set_current_details(details_markdown(self._progress.status))
            self._events.progress()

    @workflow.signal(name=CHUNKS_READY_SIGNAL)
    def chunks_ready(self, ready: ChunksReady) -> None:
        if self._ready is None or ready.chunks > self._ready.chunks:
            self._ready = ready

    @workflow.signal(name=STEP_RETRYING_SIGNAL)
    def step_retrying(self, failed: StepAttemptFailed) -> None:
        progress, events = self._progress, self._events
        if progress is None or events is None or progress.status.state in TERMINAL_STATES:
            return
        progress.status.retrying = RetryingStep(
            step=failed.step, attempt=failed.attempt + 1, last_error=failed.error
        )
        workflow.set_current_details(details_markdown(progress.status))
        events.retrying()

    @workflow.signal(name=NAMESPACE_CONTROL_SIGNAL)
    def namespace_control(self, control: TableControl) -> None:
        """The namespace purge's pause, resume and budget share, taken as an operator's own
        would be (a pause during planning takes hold when the deletes would begin)."""
        if self._progress is None or self._request is None:
            self._early_control = control
            return
        status = self._progress.status
        if status.state in TERMINAL_STATES:
            return
        if control.bucket_requests_per_second != status.bucket_requests_per_second:
            status.bucket_requests_per_second = control.bucket_requests_per_second
            self._request = _with_budget(self._request, control.bucket_requests_per_second)
            self._interrupt = True
        if control.paused != status.paused:
            status.paused = control.paused
            self._interrupt = self._interrupt or control.paused
        workflow.set_current_details(details_markdown(status))

    @workflow.update(name=PAUSE_UPDATE)
    def pause(self) -> PurgeStatus:
        """Stops the running chunks (they keep their checkpoints) and starts no more."""
        status = self._status()
        status.paused = True
        self._interrupt = True
        workflow.set_current_details(details_markdown(status))
        return status

    @pause.validator
    def _validate_pause(self) -> None:
        control_guard(check_pause, self._status())

    @workflow.update(name=RESUME_UPDATE)
    def resume(self) -> PurgeStatus:
        status = self._status()
        status.paused = False
        return status

    @resume.validator
    def _validate_resume(self) -> None:
        control_guard(check_resume, self._status())

    @workflow.update(name=RATE_BUDGET_UPDATE)
    def set_rate_budget(self, change: RateBudgetChange) -> PurgeStatus:
        """Takes hold at once: the running chunks restart from their checkpoints on the new budget."""
        status = self._status()
        status.bucket_requests_per_second = change.bucket_requests_per_second
        self._request = _with_budget(self._current_request(), change.bucket_requests_per_second)
        self._interrupt = True
        workflow.set_current_details(details_markdown(status))
        return status

    @set_rate_budget.validator
    def _validate_rate_budget(self, change: RateBudgetChange) -> None:
        control_guard(check_rate_budget, self._status())

    @workflow.update(name=UNDROP_UPDATE)
    async def undrop(self) -> PurgeStatus:
        """Ends a SCHEDULED purge with nothing deleted; with its catalog configured, the table is
        registered again under its identifier at the purged metadata location."""
        status = self._status()
        request = self._current_request()
        self._window.undropping = True
        try:
            result = await register_table(TableRef.of(status.purge_id, request), request.snapshot_location())
        except ActivityError as error:
            raise ApplicationError(
                failure_reason(error), type=failure_type(error), non_retryable=True
            ) from None
        finally:
            self._window.undropping = False
        status.undropped_note = result.note
        self._window.undropped = True
        if self._progress is not None:
            self._progress.move_to(PurgeState.UNDROPPED, workflow.now())
        return status

    @undrop.validator
    def _validate_undrop(self) -> None:
        control_guard(self._window.check_undrop, self._status())

    @workflow.update(name=EXPEDITE_UPDATE)
    def expedite(self) -> PurgeStatus:
        """Ends a SCHEDULED purge's window now: its deletes begin."""
        self._window.expedited = True
        return self._status()

    @expedite.validator
    def _validate_expedite(self) -> None:
        control_guard(self._window.check_expedite, self._status())

    @workflow.run
    async def run(self, request: dict[str, Any], carried: CarriedState | None = None) -> PurgeReport:
        try:
            parsed = parse_request(request)
        except InvalidPurgeRequestError as error:
            raise ApplicationError(str(error), type=ERROR_INVALID_REQUEST, non_retryable=True) from None
        status = carried.status if carried else self._new_status(parsed)
        self._request = _with_budget(parsed, status.bucket_requests_per_second)
        workflow.upsert_search_attributes([*identity_updates(parsed), *progress_updates(status)])
        workflow.set_current_details(details_markdown(status))
        progress = self._progress = Progress(status, _publish)
        events = self._events = EventStream(
            TableEvents(status),
            carried.events if carried else EventCursor(chain_id=workflow.info().first_execution_run_id),
            timedelta(seconds=parsed.options.progress_event_seconds),
            parsed.notify_workflow_id,
        )
        events.start()
        if carried:
            progress.status.run_count += 1
        else:
            events.emit(EventKind.STARTED)
        if self._early_control is not None:
            self.namespace_control(self._early_control)
        try:
            plan = carried.plan if carried else await self._prepare(progress)
            if plan is None:
                await self._close_events(EventKind.UNDROPPED)
                return _report(progress.status)
            if carried:
                self._chunks.next_chunk = carried.next_chunk
                self._target = ChunkTarget(plan.plan_location, plan.engine, plan.chunk_count)
            await self._delete_chunks(plan, progress)
            if self._chunks.next_chunk < plan.chunk_count:
                await events.close()
                self._continue(progress, plan, self._chunks.next_chunk, events.cursor)
            report = await self._finalize(plan, progress)
            success = EventKind.COMPLETED_WITH_ERRORS if status.failures_total else EventKind.COMPLETED
            await self._close_events(success)
            return report
        except ActivityError as error:
            if isinstance(error.cause, CancelledError):
                await self._stop_cancelled(progress)
                raise
            await self._fail(progress, failure_reason(error), failure_type(error))
        except PurgeRefusedError as refusal:
            await self._fail(progress, refusal.reason, refusal.error_type)
        except asyncio.CancelledError:
            await self._stop_cancelled(progress)
            raise

    async def _fail(self, progress: Progress, reason: str, error_type: str | None) -> NoReturn:
        progress.failed(reason, error_type, workflow.now())
        # In the memo, listings show why without asking each purge.
        workflow.upsert_memo(error_memo(reason, error_type))
        await self._close_events(EventKind.FAILED)
        raise ApplicationError(reason, type=error_type, non_retryable=True) from None

    def _status(self) -> PurgeStatus:
        if self._progress is None:
            raise ApplicationError("the purge has not started yet; try again in a moment")
        return self._progress.status

    def _current_request(self) -> PurgeRequest:
        if self._request is None:
            raise ApplicationError("the purge has not started yet; try again in a moment")
        return self._request

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
            by_name=request.by_name,
            engine=request.options.engine.value,
            bucket_requests_per_second=request.options.bucket_requests_per_second,
            started_at=now,
            updated_at=now,
        )

    async def _close_events(self, final: EventKind) -> None:
        if self._events is not None:
            self._events.emit(final)
            await self._events.close()

    async def _stop_cancelled(self, progress: Progress) -> None:
        progress.move_to(PurgeState.CANCELLED, workflow.now())
        await self._close_events(EventKind.CANCELLED)

    async def _prepare(self, progress: Progress) -> PlanSummary | None:
        """Everything before the first delete; None when the purge was undropped meanwhile."""
        request = self._current_request()
        status = progress.status
        table = TableRef.of(status.purge_id, request)
        if request.by_name:
            progress.move_to(PurgeState.LOADING, workflow.now())
            loaded = await load_table(table)
            settled(status, LOAD_TABLE_ACTIVITY)
            status.guards.append(loaded.protection)
            status.metadata_location = loaded.metadata_location
            self._request = resolved(self._current_request(), loaded)
        window = request.options.purge_after_seconds
        overlap = request.options.delete_while_planning and not request.by_name and not window
        plan = await self._plan(progress, overlap=overlap)
        if request.options.dry_run:
            await self._preview_live_tables(plan.locations, progress)
            return plan
        if request.by_name:
            # Only now: a table is never dropped before its plan is recorded.
            progress.move_to(PurgeState.DROPPING, workflow.now())
            dropped = await drop_table(table, self._current_request())
            settled(status, DROP_TABLE_ACTIVITY)
            status.dropped_at = workflow.now()
            if dropped.storage_gone:
                status.storage_deleted_by_catalog = True
                self._request = checking_existence(self._current_request())
        if window and not await self._wait_window(progress, window):
            return None
        if not self._guarded:
            await self._check_live_tables(plan.locations, progress)
        return plan

    async def _wait_window(self, progress: Progress, seconds: int) -> bool:
        """Waits in SCHEDULED until the time comes or an operator expedites; False once undropped."""
        status = progress.status
        due = workflow.now() + timedelta(seconds=seconds)
        status.scheduled_for = due
        workflow.upsert_search_attributes(scheduled_update(status))
        progress.move_to(PurgeState.SCHEDULED, workflow.now())
        if self._events is not None:
            self._events.emit(EventKind.SCHEDULED)
        return await self._window.wait_until(due)

    async def _check_live_tables(self, locations: list[str], progress: Progress) -> None:
        status = progress.status
        outcome = await live_table_outcome(self._current_request(), status.purge_id, locations)
        self._guarded = True
        settled(status, LIVE_TABLE_GUARD_ACTIVITY)
        status.guards.append(outcome)
        workflow.set_current_details(details_markdown(status))
        if not outcome.passed:
            raise PurgeRefusedError(
                f"the live-table guard refused the purge, nothing was deleted: {outcome.detail}",
                ERROR_LIVE_TABLE,
            )

    async def _preview_live_tables(self, locations: list[str], progress: Progress) -> None:
        """A dry run meets the guard the real purge would, and says what it would refuse."""
        status = progress.status
        if not workflow.patched(PREVIEW_GUARDS):
            status.guards.append(guard_not_applied("a dry run deletes nothing"))
            return
        outcome = await live_table_outcome(
            self._current_request(), status.purge_id, locations, preview_of_drop=status.by_name
        )
        settled(status, LIVE_TABLE_GUARD_ACTIVITY)
        status.guards.append(previewed(outcome))
        workflow.set_current_details(details_markdown(status))

    async def _plan(self, progress: Progress, overlap: bool) -> PlanSummary:
        """With `overlap`, chunks planning announces start deleting while it goes on, once the
        live-table guard has passed: nothing stands between the plan and the deletes."""
        progress.move_to(PurgeState.PLANNING, workflow.now())
        planning = asyncio.ensure_future(
            run_step(
                PLAN,
                PlanInput(purge_id=progress.status.purge_id, request=self._current_request()),
            )
        )
        try:
            if overlap:
                await self._delete_while_planning(planning, progress)
            plan: PlanSummary = await planning
        except BaseException:
            await cancel_all([planning])
            await self._chunks.abandon()
            raise
        settled(progress.status, PLAN_ACTIVITY)
        progress.planned(plan, workflow.now())
        self._target = ChunkTarget(plan.plan_location, plan.engine, plan.chunk_count)
        record_step(plan.planning_counts, 0)
        return plan

    async def _delete_while_planning(self, planning: asyncio.Task[PlanSummary], progress: Progress) -> None:
        """A pause or a budget change stops the early chunks; they run again after the plan. No
        chunk starts here once the server suggests continuing as new (planning can't move to a
        new run): the rest wait for the plan, so history stays bounded."""
        options = self._current_request().options
        # A dry run deletes nothing: its guard is not applied, and its chunks need none.
        cleared = options.dry_run
        while not planning.done():
            ready = self._ready
            if ready is not None and not cleared:
                await self._check_live_tables(ready.locations, progress)
                cleared = True
            if self._interrupt:
                self._interrupt = False
                await self._chunks.stop()
            if ready is not None and cleared and not progress.status.paused:
                self._target = ChunkTarget(ready.plan_location, ready.engine, None)
                progress.status.chunks_total = max(progress.status.chunks_total, ready.chunks)
                suggested = workflow.info().is_continue_as_new_suggested()
                limit = self._chunks.next_chunk if suggested else ready.chunks
                self._chunks.fill(options.chunk_window, limit)
            await workflow.wait_condition(partial(self._woken_while_planning, planning, ready))
            self._chunks.collect()

    def _woken_while_planning(self, planning: asyncio.Task[PlanSummary], seen: ChunksReady | None) -> bool:
        more = self._ready is not None and self._ready is not seen
        resumed = self._chunks.stopped and self._progress is not None and not self._progress.status.paused
        return planning.done() or more or resumed or self._interrupt or self._chunks.any_done()

    async def _delete_chunks(self, plan: PlanSummary, progress: Progress) -> None:
        """Runs chunks in a sliding window until every one ran, or until the run should continue
        as new first (then `self._chunks.next_chunk` is below the chunk count)."""
        progress.move_to(PurgeState.DELETING, workflow.now())
        window = self._current_request().options.chunk_window
        try:
            while True:
                if self._interrupt:
                    self._interrupt = False
                    await self._chunks.stop()
                if progress.status.paused:
                    await self._stay_paused(progress)
                suggested = workflow.info().is_continue_as_new_suggested()
                self._chunks.fill(window, self._chunks.next_chunk if suggested else plan.chunk_count)
                if not self._chunks.running:
                    return
                await workflow.wait_condition(lambda: self._interrupt or self._chunks.any_done())
                self._chunks.collect()
        except asyncio.CancelledError:
            await self._chunks.abandon()
            raise

    async def _stay_paused(self, progress: Progress) -> None:
        progress.move_to(PurgeState.PAUSED, workflow.now())
        await workflow.wait_condition(lambda: not progress.status.paused)
        progress.move_to(PurgeState.DELETING, workflow.now())

    def _chunk_done(self, result: ChunkResult) -> None:
        progress = self._progress
        if progress is None:
            return
        settled(progress.status, chunk_step(result.chunk_index))
        progress.chunk_done(result, workflow.now())
        record_step(result.counts, result.throttled_requests)
        if self._events is not None:
            self._events.progress()

    def _chunk_started(self, index: int) -> None:
        if self._progress is not None:
            self._progress.chunk_started(index)

    async def _chunk(self, index: int) -> ChunkResult:
        target = self._target
        if target is None:
            raise ApplicationError("a chunk started before any chunk was ready", non_retryable=True)
        of = f"/{target.chunk_count}" if target.chunk_count is not None else " (while planning)"
        result: ChunkResult = await run_step(
            CHUNK,
            ChunkInput(
                purge_id=self._status().purge_id,
                request=self._current_request(),
                plan_location=target.plan_location,
                chunk_index=index,
                engine=target.engine,
            ),
            cancellation_type=workflow.ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
            summary=f"chunk {index + 1}{of}",
        )
        return result

    def _continue(self, progress: Progress, plan: PlanSummary, next_chunk: int, events: EventCursor) -> None:
        """The next run gets the resolved request: a purge by name is never loaded twice."""
        carried = CarriedState(status=progress.status, plan=plan, next_chunk=next_chunk, events=events)
        workflow.continue_as_new(args=[self._current_request().model_dump(mode="json"), carried])

    async def _finalize(self, plan: PlanSummary, progress: Progress) -> PurgeReport:
        progress.move_to(PurgeState.FINALIZING, workflow.now())
        status = progress.status
        result: FinalizeResult = await run_step(
            FINALIZE,
            FinalizeInput(
                purge_id=status.purge_id,
                request=self._current_request(),
                plan_location=plan.plan_location,
                chunk_count=plan.chunk_count,
                keep_metadata_chain=status.failures_total > 0,
                counts_so_far=status.counts,
                guards=status.guards,
            ),
        )
        settled(status, FINALIZE_ACTIVITY)
        progress.finalized(result, workflow.now())
        record_step(result.counts, result.throttled_requests)
        status.report_location = result.report_location
        if self._current_request().options.sweep_location:
            progress.move_to(PurgeState.SWEEPING, workflow.now())
            status.sweep = await sweep_location(self._current_request(), status, plan.locations)
        now = workflow.now()
        final = PurgeState.SUCCEEDED_WITH_ERRORS if status.failures_total else PurgeState.SUCCEEDED
        progress.move_to(final, now)
        return _report(status)


def _report(status: PurgeStatus) -> PurgeReport:
    now = workflow.now()
    started = status.started_at or now
    return PurgeReport(status=status, duration_seconds=(now - started).total_seconds())


def _publish(status: PurgeStatus) -> None:
    workflow.upsert_search_attributes(progress_updates(status))
    workflow.set_current_details(details_markdown(status))


def _with_budget(request: PurgeRequest, budget: float | None) -> PurgeRequest:
    options = request.options.model_copy(update={"bucket_requests_per_second": budget})
    return request.model_copy(update={"options": options})
