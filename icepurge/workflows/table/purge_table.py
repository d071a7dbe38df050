"""The PurgeTable workflow: (load and) plan, (drop, wait out a soft delete, guard,) delete
content chunk by chunk, finalize, report.

Deterministic: no I/O, only the contract models; every side effect is an activity.
"""

from __future__ import annotations

import asyncio
from typing import Any, NoReturn

from temporalio import workflow
from temporalio.exceptions import ActivityError, ApplicationError, CancelledError

from icepurge.contract.catalog_steps import (
    HeldTable,
    TableRef,
)
from icepurge.contract.controls import (
    DropConfirmation,
    StageWait,
    TableControl,
    check_pause,
    check_rate_budget,
    check_resume,
    reached,
)
from icepurge.contract.events import EventKind, TableEvents
from icepurge.contract.names import (
    AWAIT_STAGE_UPDATE,
    CHUNK_PROGRESS_SIGNAL,
    CHUNKS_READY_SIGNAL,
    DROP_CONFIRMED_SIGNAL,
    ERROR_INVALID_REQUEST,
    EXPEDITE_UPDATE,
    NAMESPACE_CONTROL_SIGNAL,
    STATUS_QUERY,
    STEP_RETRYING_SIGNAL,
    UNDROP_UPDATE,
    WORKFLOW_TYPE,
)
from icepurge.contract.progress import Progress
from icepurge.contract.search_attributes import identity_updates, progress_updates
from icepurge.contract.states import TERMINAL_STATES, PurgeState
from icepurge.contract.status import PurgeReport, PurgeStatus
from icepurge.contract.steps import (
    ChunkProgress,
    ChunksReady,
    StepAttemptFailed,
)
from icepurge.contract.validation import parse_request
from icepurge.workflows.shared.control_handlers import ControlChecks, ControlHandlers
from icepurge.workflows.shared.details import details_markdown
from icepurge.workflows.shared.run_start import start_run
from icepurge.workflows.shared.step_outcomes import (
    PurgeRefusedError,
    control_guard,
    error_memo,
    failure_reason,
    failure_type,
)
from icepurge.workflows.table.soft_delete import SoftDeleteWindow
from icepurge.workflows.table.table_deletes import TableDeletes
from icepurge.workflows.table.table_lifecycle import (
    register_table,
    release_held_table,
)
from icepurge.workflows.table.table_run import (
    CarriedState,
    TablePublisher,
    TableRun,
    new_status,
    report_of,
    with_budget,
)
from icepurge.workflows.table.table_steps import TableSteps

TABLE_CONTROL_CHECKS = ControlChecks(check_pause, check_resume, check_rate_budget)


@workflow.defn(name=WORKFLOW_TYPE)
class PurgeTableWorkflow(TableSteps, ControlHandlers[PurgeStatus]):
    @workflow.init
    def __init__(self, request: dict[str, Any], carried: CarriedState | None = None) -> None:
        self._window = SoftDeleteWindow()
        self._deletes = TableDeletes(self._table_run, self._check_live_tables)
        self._guarded = False
        self._at_once = False
        self._drop_confirmation: DropConfirmation | None = None
        self._held: HeldTable | None = None
        self._invalid: str | None = None
        self._run: TableRun | None = None
        start = start_run(request, parse_request, carried, new_status, TableEvents)
        if isinstance(start, str):
            self._invalid = start
            return
        self._run = TableRun(
            with_budget(start.request, start.status.bucket_requests_per_second),
            Progress(start.status, TablePublisher()),
            start.events,
        )

    @workflow.query(name=STATUS_QUERY)
    def status(self) -> PurgeStatus:
        return self._status()

    @workflow.signal(name=CHUNK_PROGRESS_SIGNAL)
    def chunk_progress(self, update: ChunkProgress) -> None:
        if self._run is not None:
            self._run.progress.chunk_progress(update.chunk_index, update.counts, workflow.now())
            workflow.set_current_details(details_markdown(self._run.progress.status))
            self._run.events.progress(standing_still=self._run.progress.status.paused)

    @workflow.signal(name=CHUNKS_READY_SIGNAL)
    def chunks_ready(self, ready: ChunksReady) -> None:
        self._deletes.announce(ready)

    @workflow.update(name=AWAIT_STAGE_UPDATE)
    async def await_stage(self, wait: StageWait) -> PurgeStatus:
        """Answers once the purge reached the stage (or closed): a caller waits without polling."""
        await workflow.wait_condition(lambda: reached(self._status(), wait.stage))
        return self._status()

    @workflow.signal(name=DROP_CONFIRMED_SIGNAL)
    def drop_confirmed(self, confirmation: DropConfirmation) -> None:
        self._drop_confirmation = confirmation

    @workflow.signal(name=STEP_RETRYING_SIGNAL)
    def step_retrying(self, failed: StepAttemptFailed) -> None:
        if self._run is None or self._run.progress.status.state in TERMINAL_STATES:
            return
        self._run.progress.retrying(failed.step, failed.attempt + 1, failed.error)
        self._run.events.retrying()

    @workflow.signal(name=NAMESPACE_CONTROL_SIGNAL)
    def namespace_control(self, control: TableControl) -> None:
        """The namespace purge's pause, resume and budget share, taken as an operator's own
        would be (a pause during planning takes hold when the deletes would begin)."""
        if self._run is None or self._run.progress.status.state in TERMINAL_STATES:
            return
        budget_changed, pause_began = self._run.progress.namespace_control(
            control.paused, control.bucket_requests_per_second
        )
        if budget_changed:
            self._run.request = with_budget(self._run.request, control.bucket_requests_per_second)
        if budget_changed or pause_began:
            self._deletes.interrupt()

    def _controlled_status(self) -> PurgeStatus:
        return self._status()

    def _control_checks(self) -> ControlChecks[PurgeStatus]:
        return TABLE_CONTROL_CHECKS

    async def _apply_pause(self, paused: bool) -> None:
        """A pause stops the running chunks (they keep their checkpoints); a resume lets the
        deletes go on, said by the move back to DELETING."""
        self._table_run().progress.paused(paused, publish=paused)
        if paused:
            self._deletes.interrupt()

    async def _apply_budget(self, requests_per_second: float | None) -> None:
        """Takes hold at once: the running chunks restart from their checkpoints on the new budget."""
        run = self._table_run()
        run.progress.budget(requests_per_second)
        run.request = with_budget(run.request, requests_per_second)
        self._deletes.interrupt()

    @workflow.update(name=UNDROP_UPDATE)
    async def undrop(self) -> PurgeStatus:
        """Ends a SCHEDULED purge with nothing deleted; with its catalog configured, the table is
        registered again under its identifier at the purged metadata location (a held table is
        moved back)."""
        run = self._table_run()
        status = run.progress.status
        table = TableRef.of(status.purge_id, run.request)
        self._window.undropping = True
        try:
            if self._held is not None:
                result = await release_held_table(self._held, table)
            else:
                result = await register_table(table, run.request.snapshot_location())
        except ActivityError as error:
            raise ApplicationError(
                failure_reason(error), type=failure_type(error), non_retryable=True
            ) from None
        finally:
            self._window.undropping = False
        self._window.undropped = True
        run.progress.undropped(result.note, workflow.now())
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
        if self._run is None:
            raise ApplicationError(str(self._invalid), type=ERROR_INVALID_REQUEST, non_retryable=True)
        progress, events = self._run.progress, self._run.events
        status = progress.status
        workflow.upsert_search_attributes([*identity_updates(self._run.request), *progress_updates(status)])
        workflow.set_current_details(details_markdown(status))
        events.start()
        if carried:
            progress.next_run()
        else:
            events.emit(EventKind.STARTED)
        try:
            plan = carried.plan if carried else await self._prepare(progress)
            if plan is None:
                await self._close(EventKind.UNDROPPED)
                return report_of(status)
            if self._at_once:
                report = await self._finish_at_once(plan, progress)
            else:
                if carried:
                    self._deletes.resume_at(plan, carried.next_chunk)
                await self._deletes.delete_chunks(plan, progress)
                if self._deletes.next_chunk < plan.chunk_count:
                    await events.close_for_next_run()
                    await workflow.wait_condition(workflow.all_handlers_finished)
                    self._continue(progress, plan, self._deletes.next_chunk, events.cursor)
                report = await self._finalize(plan, progress)
            await self._close(
                EventKind.COMPLETED_WITH_ERRORS if status.failures_total else EventKind.COMPLETED
            )
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
        await self._close(EventKind.FAILED)
        raise ApplicationError(reason, type=error_type, non_retryable=True) from None

    async def _close(self, final: EventKind) -> None:
        """The last event, delivered; then no handler is left half-way when the run ends."""
        events = self._table_run().events
        events.emit(final)
        await events.close()
        await workflow.wait_condition(workflow.all_handlers_finished)

    async def _stop_cancelled(self, progress: Progress) -> None:
        progress.move_to(PurgeState.CANCELLED, workflow.now())
        await self._close(EventKind.CANCELLED)
