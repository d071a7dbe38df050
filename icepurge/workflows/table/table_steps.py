"""The PurgeTable workflow's steps around its deletes: before them the hold, the load (and on the
express lane the plan and drop), the drop or the caller's confirmation of it, the soft-delete
window and the live-table guard; after them finalize and the sweep, or the express lane's finish
in one step. The workflow class (purge_table.py) holds the handlers and the run.

Deterministic: no I/O, only the contract models; every side effect is an activity.
"""

from __future__ import annotations

from datetime import timedelta

from temporalio import workflow
from temporalio.exceptions import ApplicationError

from icepurge.contract.activity_steps import FINALIZE
from icepurge.contract.catalog_steps import (
    HeldTable,
    TableRef,
    checking_existence,
    guard_not_applied,
    resolved,
)
from icepurge.contract.controls import (
    DropConfirmation,
)
from icepurge.contract.events import EventCursor, EventKind
from icepurge.contract.express_steps import DroppedPlan, LoadedPlan, finishes_at_once
from icepurge.contract.names import (
    DROP_TABLE_ACTIVITY,
    ERROR_DROP_UNCONFIRMED,
    ERROR_LIVE_TABLE,
    ERROR_STORAGE_GONE,
    FINALIZE_ACTIVITY,
    HOLD_TABLE_ACTIVITY,
    LIVE_TABLE_GUARD_ACTIVITY,
    LOAD_TABLE_ACTIVITY,
)
from icepurge.contract.progress import Progress
from icepurge.contract.request import PurgeRequest
from icepurge.contract.states import PurgeState
from icepurge.contract.status import GuardOutcome, PurgeReport, PurgeStatus
from icepurge.contract.steps import (
    FinalizeInput,
    FinalizeResult,
    PlanSummary,
    chunk_step,
)
from icepurge.workflows.shared.step_outcomes import (
    PurgeRefusedError,
)
from icepurge.workflows.shared.steps_runner import run_step
from icepurge.workflows.shared.upgrades import PREVIEW_GUARDS
from icepurge.workflows.table.express_lane import (
    drops_with_plan,
    finish_small,
    load_and_plan,
    load_plan_and_drop,
    takes_express,
    takes_snapshot_at_once,
)
from icepurge.workflows.table.location_sweep import sweep_location
from icepurge.workflows.table.metrics import record_step
from icepurge.workflows.table.soft_delete import SoftDeleteWindow
from icepurge.workflows.table.table_deletes import TableDeletes
from icepurge.workflows.table.table_lifecycle import (
    drop_table,
    hold_table,
    holds,
    live_table_outcome,
    load_table,
    previewed,
)
from icepurge.workflows.table.table_run import (
    CarriedState,
    TableRun,
    report_of,
)


class TableSteps:
    """Set by the workflow's `@workflow.init`: the run (None for an invalid request, `_invalid`
    saying why), the soft-delete window, the deletes, and where the steps stand."""

    _run: TableRun | None
    _invalid: str | None
    _window: SoftDeleteWindow
    _deletes: TableDeletes
    _guarded: bool
    # The express lane's small table: guard, deletes and finalize in one step after the drop.
    _at_once: bool
    _drop_confirmation: DropConfirmation | None
    _held: HeldTable | None

    def _table_run(self) -> TableRun:
        if self._run is None:
            raise ApplicationError(f"the purge's request is invalid: {self._invalid}", non_retryable=True)
        return self._run

    def _status(self) -> PurgeStatus:
        return self._table_run().progress.status

    def _current_request(self) -> PurgeRequest:
        return self._table_run().request

    async def _prepare(self, progress: Progress) -> PlanSummary | None:
        """Everything before the first delete; None when the purge was undropped meanwhile."""
        request = self._current_request()
        status = progress.status
        table = TableRef.of(status.purge_id, request)
        window = request.options.purge_after_seconds
        hold_namespace = holds(request)
        if hold_namespace is not None:
            # Free at once, whatever the size: the rest works on the held table, deleting nothing
            # before the catalog's own drop of it.
            table = await self._hold(progress, table, hold_namespace)
            if window and not await self._wait_window(progress, window):
                return None
            window = 0
        planned, dropped = await self._load_by_name(progress, table) if request.by_name else (None, False)
        drop_first = request.by_name and request.options.drop_before_plan and not request.options.dry_run
        if drop_first:
            # The loaded snapshot is durable in history: the plan reads it after the drop.
            await self._drop(progress, table)
            if status.storage_deleted_by_catalog:
                raise PurgeRefusedError(
                    f"catalog {request.catalog!r} deleted the table's storage when it dropped it, so "
                    "there was nothing to plan or delete; it needs drop_before_plan off (front door: "
                    "upstream_keeps_storage false) for exact counts",
                    ERROR_STORAGE_GONE,
                )
        awaits_drop = request.options.await_drop_seconds > 0 and not request.by_name
        overlap = (
            request.options.delete_while_planning and not request.by_name and not window and not awaits_drop
        )
        # A pause that came with the start holds the deletes: the one step would not wait for it.
        at_once = not window and not awaits_drop and not status.paused and takes_snapshot_at_once(request)
        plan = planned or await self._deletes.plan(progress, overlap=overlap, at_once=at_once)
        if self._deletes.finished is not None:
            self._at_once = True
        if request.options.dry_run:
            await self._preview_live_tables(plan.locations, progress)
            return plan
        if request.by_name and not drop_first and not dropped:
            # Only now: a table is never dropped before its plan is recorded.
            await self._drop(progress, table)
        if awaits_drop:
            await self._await_callers_drop(progress, request.options.await_drop_seconds)
        if window and not await self._wait_window(progress, window):
            return None
        if not self._guarded and not self._at_once:
            await self._check_live_tables(plan.locations)
        return plan

    async def _load_by_name(self, progress: Progress, table: TableRef) -> tuple[PlanSummary | None, bool]:
        """Loads the table; on the express lane plans it too and (purges started since the drop
        joined that step) drops it. Returns the plan, if made, and whether the table was dropped."""
        request = self._current_request()
        progress.move_to(PurgeState.LOADING, workflow.now())
        prepared: DroppedPlan | LoadedPlan | None = None
        if takes_express(request):
            if drops_with_plan():
                held_at = self._held.held if self._held else None
                prepared = await load_plan_and_drop(progress.status.purge_id, request, held_at)
            else:
                prepared = await load_and_plan(progress.status.purge_id, request)
        loaded = prepared.loaded if prepared else await load_table(table)
        if loaded is None:
            raise ApplicationError("load_and_plan returned no table to purge by name", non_retryable=True)
        progress.settled(LOAD_TABLE_ACTIVITY)
        if self._held is None:
            progress.loaded(loaded.protection, loaded.metadata_location)
        self._table_run().request = resolved(self._current_request(), loaded)
        if prepared is None:
            return None, False
        planned = self._deletes.adopt(prepared.plan, progress)
        self._at_once = finishes_at_once(planned)
        if isinstance(prepared, DroppedPlan):
            self._dropped(progress, prepared.storage_gone)
            return planned, True
        return planned, False

    async def _hold(self, progress: Progress, table: TableRef, hold_namespace: str) -> TableRef:
        """The table leaves its identifier for the hold namespace: dropped, as its caller sees it."""
        progress.move_to(PurgeState.LOADING, workflow.now())
        self._held = await hold_table(table, hold_namespace)
        loaded = self._held.loaded
        progress.settled(HOLD_TABLE_ACTIVITY)
        progress.loaded(loaded.protection, loaded.metadata_location)
        progress.held(workflow.now(), ".".join(self._held.held.identifier))
        return self._held.held

    async def _drop(self, progress: Progress, table: TableRef) -> None:
        progress.move_to(PurgeState.DROPPING, workflow.now())
        dropped = await drop_table(table, self._current_request())
        self._dropped(progress, dropped.storage_gone)

    def _dropped(self, progress: Progress, storage_gone: bool) -> None:
        progress.settled(DROP_TABLE_ACTIVITY)
        progress.dropped(workflow.now(), storage_gone)
        if storage_gone:
            self._table_run().request = checking_existence(self._current_request())

    async def _await_callers_drop(self, progress: Progress, seconds: int) -> None:
        """Nothing is deleted before the caller says the table left its catalog."""
        progress.move_to(PurgeState.DROPPING, workflow.now())
        try:
            await workflow.wait_condition(
                lambda: self._drop_confirmation is not None, timeout=timedelta(seconds=seconds)
            )
        except TimeoutError:
            raise PurgeRefusedError(
                f"the caller did not confirm the table's drop within {seconds} s, so nothing was "
                "deleted; if the table did leave its catalog, purge this snapshot again "
                "(icepurge purge rerun with this purge's id)",
                ERROR_DROP_UNCONFIRMED,
            ) from None
        storage_gone = self._drop_confirmation is not None and self._drop_confirmation.storage_gone
        progress.dropped(workflow.now(), storage_gone)
        if storage_gone:
            self._table_run().request = checking_existence(self._current_request())

    async def _wait_window(self, progress: Progress, seconds: int) -> bool:
        """Waits in SCHEDULED until the time comes or an operator expedites; False once undropped."""
        due = workflow.now() + timedelta(seconds=seconds)
        progress.scheduled(due, workflow.now())
        self._table_run().events.emit(EventKind.SCHEDULED)
        return await self._window.wait_until(due)

    async def _check_live_tables(self, locations: list[str]) -> None:
        progress = self._table_run().progress
        status = progress.status
        outcome = await live_table_outcome(self._current_request(), status.purge_id, locations)
        self._guard_met(outcome)

    def _guard_met(self, outcome: GuardOutcome) -> None:
        progress = self._table_run().progress
        self._guarded = True
        progress.settled(LIVE_TABLE_GUARD_ACTIVITY)
        progress.guarded(outcome)
        if not outcome.passed:
            raise PurgeRefusedError(
                f"the live-table guard refused the purge, nothing was deleted: {outcome.detail}",
                ERROR_LIVE_TABLE,
            )

    async def _preview_live_tables(self, locations: list[str], progress: Progress) -> None:
        """A dry run meets the guard the real purge would, and says what it would refuse."""
        status = progress.status
        if not workflow.patched(PREVIEW_GUARDS):
            progress.guarded(guard_not_applied("a dry run deletes nothing"), publish=False)
            return
        outcome = await live_table_outcome(
            self._current_request(), status.purge_id, locations, preview_of_drop=status.by_name
        )
        progress.settled(LIVE_TABLE_GUARD_ACTIVITY)
        progress.guarded(previewed(outcome))

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
        return await self._finalized(plan, progress, result)

    async def _finalized(self, plan: PlanSummary, progress: Progress, result: FinalizeResult) -> PurgeReport:
        status = progress.status
        progress.settled(FINALIZE_ACTIVITY)
        progress.finalized(result, workflow.now())
        record_step(result.counts, result.throttled_requests)
        progress.reported(result.report_location)
        if self._current_request().options.sweep_location:
            progress.move_to(PurgeState.SWEEPING, workflow.now())
            progress.swept(await sweep_location(self._current_request(), status, plan.locations))
        now = workflow.now()
        final = PurgeState.SUCCEEDED_WITH_ERRORS if status.failures_total else PurgeState.SUCCEEDED
        progress.move_to(final, now)
        return report_of(status)

    async def _finish_at_once(self, plan: PlanSummary, progress: Progress) -> PurgeReport:
        """The express lane's last step, recorded in the status as the steps it holds would be
        (the state moves from DELETING to the outcome: guard, chunks and finalize ran as one)."""
        progress.move_to(PurgeState.DELETING, workflow.now())
        status = progress.status
        result = self._deletes.finished or await finish_small(
            status.purge_id, self._current_request(), plan, list(status.guards)
        )
        self._guard_met(result.guard)
        for chunk in result.chunks:
            progress.settled(chunk_step(chunk.chunk_index))
            progress.chunk_done(chunk, workflow.now())
            record_step(chunk.counts, chunk.throttled_requests)
        if result.finalize is None:
            raise ApplicationError("finish_small_purge returned no finalize result", non_retryable=True)
        return await self._finalized(plan, progress, result.finalize)
