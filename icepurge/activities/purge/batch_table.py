"""One table of a small-table batch (icepurge.contract.batch_steps): the express lane's steps in
the order a table purge workflow runs them (load, plan, drop, guard, deletes, finalize), and the
status that workflow would have recorded, kept as the table's record. What a crash between steps
leaves is in the state location: the plan, kept before the drop; the chunks' outcomes; the report
and the record, written last. A retried batch takes each table up from there."""

from __future__ import annotations

from datetime import UTC, datetime

from temporalio.exceptions import ApplicationError

from icepurge.activities.catalog.planned_drop import DropAttempt, PlannedDrops, TableChangedError
from icepurge.activities.catalog.table_catalog import Ancestry
from icepurge.activities.purge.express_finish import ExpressFinish
from icepurge.activities.purge.purge_services import PurgeServices
from icepurge.catalogs.guard_cohort import GuardParty
from icepurge.contract.batch_steps import (
    BatchedTables,
    BatchTable,
    BatchTableOutcome,
    batched_tables_path,
    table_record_path,
)
from icepurge.contract.catalog_steps import TableRef
from icepurge.contract.express_steps import FinishInput, finishes_at_once
from icepurge.contract.names import ERROR_LIVE_TABLE, ERROR_TABLE_CHANGED
from icepurge.contract.progress import Progress, pending_status, report_at
from icepurge.contract.states import PurgeState
from icepurge.contract.status import PurgeReport, PurgeStatus
from icepurge.contract.steps import PlanInput, PlanSummary
from icepurge.state.state_store import StateStore


class _Unpublished:
    """A batch's table has no workflow to publish to: its record is written once, at its end."""

    def changed(self, status: PurgeStatus) -> None:
        return None

    def details(self, status: PurgeStatus) -> None:
        return None

    def waiting(self, status: PurgeStatus) -> None:
        return None

    def scheduled(self, status: PurgeStatus) -> None:
        return None


class HandedBackError(Exception):
    """Nothing of the table was dropped or deleted; it needs a purge of its own."""

    def __init__(self, why: str) -> None:
        super().__init__(why)
        self.why = why


def _now() -> datetime:
    return datetime.now(UTC)


class BatchTablePurge:
    def __init__(
        self, services: PurgeServices, finish: ExpressFinish, drops: PlannedDrops, state: StateStore
    ) -> None:
        self._planning = services.planning
        self._finish_small = finish
        self._drops = drops
        self._state = state

    def recorded(self, purge_id: str) -> PurgeReport | None:
        raw = self._state.read(self._state.uri(table_record_path(purge_id)))
        return PurgeReport.model_validate_json(raw) if raw is not None else None

    def list_recorded(self, parent_id: str, first: BatchTable, outcomes: list[BatchTableOutcome]) -> None:
        """Names the batch's recorded tables where the namespace purge's table listing finds them
        (a table handed back has a workflow of its own, listed as such)."""
        recorded = [outcome.purge_id for outcome in outcomes if outcome.report is not None]
        if recorded:
            path = batched_tables_path(parent_id, first.purge_id)
            self._state.write(self._state.uri(path), BatchedTables(purge_ids=recorded))

    def run(
        self, table: BatchTable, retried: bool, ancestry: Ancestry, party: GuardParty
    ) -> BatchTableOutcome:
        """A transient fault leaves as an exception (the batch is retried); a table's own
        refusal or failure ends its purge FAILED, as a workflow's would. Whichever way it ends,
        the table is past asking for a listing: the batch's other guards wait for no more."""
        try:
            return self._run(table, retried, ancestry, party)
        finally:
            party.past_asking()

    def _run(
        self, table: BatchTable, retried: bool, ancestry: Ancestry, party: GuardParty
    ) -> BatchTableOutcome:
        if retried and (report := self.recorded(table.purge_id)) is not None:
            return BatchTableOutcome(purge_id=table.purge_id, report=report)
        progress = Progress(pending_status(table.purge_id, table.request, _now()), _Unpublished())
        try:
            self._steps(table, progress, retried, ancestry, party)
        except HandedBackError as handed:
            return BatchTableOutcome(purge_id=table.purge_id, handed_back=handed.why)
        except ApplicationError as error:
            if not error.non_retryable:
                raise
            progress.failed(error.message, error.type, _now())
        report = report_at(progress.status, _now())
        self._state.write(self._state.uri(table_record_path(table.purge_id)), report)
        return BatchTableOutcome(purge_id=table.purge_id, report=report)

    def _steps(
        self, table: BatchTable, progress: Progress, retried: bool, ancestry: Ancestry, party: GuardParty
    ) -> None:
        purge_id = table.purge_id
        progress.move_to(PurgeState.LOADING, _now())
        try:
            attempt = DropAttempt(
                TableRef.of(purge_id, table.request),
                table.request,
                self._planning.plan_folder(purge_id),
                retried,
                ancestry,
            )
            dropped = self._drops.run(attempt, self._held_plan)
        except TableChangedError as changed:
            raise HandedBackError(changed.why) from None
        except ApplicationError as error:
            if error.type == ERROR_TABLE_CHANGED:
                raise HandedBackError(error.message) from None
            raise
        kept = dropped.kept
        progress.loaded(kept.protection, kept.metadata_location)
        progress.planned(kept.plan, _now())
        progress.move_to(PurgeState.DROPPING, _now())
        progress.dropped(_now(), dropped.storage_gone)
        progress.move_to(PurgeState.DELETING, _now())
        self._finish(
            FinishInput(purge_id=purge_id, request=dropped.request, plan=kept.plan, guards=[kept.protection]),
            progress,
            party,
        )

    def _held_plan(self, step: PlanInput) -> PlanSummary:
        """A batch takes only plans it finishes at once; a bigger one is handed back before the drop."""
        plan = self._planning.plan_held(step)
        if not finishes_at_once(plan):
            raise HandedBackError(
                f"its plan holds {plan.planned.files:,} files, more than a batch takes at once"
            )
        return plan

    def _finish(self, step: FinishInput, progress: Progress, party: GuardParty) -> None:
        result = self._finish_small.finish(step, party)
        progress.guarded(result.guard)
        if not result.guard.passed:
            raise ApplicationError(
                f"the live-table guard refused the purge, nothing was deleted: {result.guard.detail}",
                type=ERROR_LIVE_TABLE,
                non_retryable=True,
            )
        for chunk in result.chunks:
            progress.chunk_done(chunk, _now())
        if result.finalize is None:
            raise ApplicationError("the finish returned no finalize result", non_retryable=True)
        progress.finalized(result.finalize, _now())
        progress.reported(result.finalize.report_location)
        final = PurgeState.SUCCEEDED_WITH_ERRORS if progress.status.failures_total else PurgeState.SUCCEEDED
        progress.move_to(final, _now())
