"""One table of a small-table batch (icepurge.contract.batch_steps): the express lane's steps in
the order a table purge workflow runs them (load, plan, drop, guard, deletes, finalize), and the
status that workflow would have recorded, kept as the table's record. What a crash between steps
leaves is in the state location: the plan, kept before the drop; the chunks' outcomes; the report
and the record, written last. A retried batch takes each table up from there."""

from __future__ import annotations

from datetime import UTC, datetime

from pydantic import BaseModel, ConfigDict
from temporalio.exceptions import ApplicationError

from icepurge.activities.catalog_activities import Ancestry, CatalogActivities
from icepurge.activities.express_activities import ExpressActivities, catalog_retries_bounded
from icepurge.activities.purge_activities import PurgeActivities
from icepurge.activities.state_store import StateStore
from icepurge.contract.batch_steps import BatchTable, BatchTableOutcome, table_record_path
from icepurge.contract.catalog_steps import (
    DropInput,
    LoadedTable,
    TableRef,
    checking_existence,
    resolved,
)
from icepurge.contract.express_steps import FinishInput, finishes_at_once
from icepurge.contract.names import ERROR_LIVE_TABLE, ERROR_TABLE_CHANGED, ERROR_TABLE_NOT_FOUND
from icepurge.contract.progress import Progress, pending_status, report_at
from icepurge.contract.request import PurgeRequest
from icepurge.contract.states import PurgeState
from icepurge.contract.status import GuardOutcome, PurgeReport, PurgeStatus
from icepurge.contract.steps import PlanInput, PlanSummary


class KeptPlan(BaseModel):
    """Written before the drop: after it, the table's snapshot is known from here alone. No
    FileIO properties (they may hold credentials): a retry takes them from the catalog."""

    model_config = ConfigDict(extra="forbid")

    metadata_location: str
    protection: GuardOutcome
    plan: PlanSummary


class DropRecord(BaseModel):
    """Written right after the drop, before any delete: a retry that finds the table gone learns
    here whether the catalog took its storage, which its own deletes would otherwise mimic."""

    model_config = ConfigDict(extra="forbid")

    storage_gone: bool


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
        self,
        purges: PurgeActivities,
        catalogs: CatalogActivities,
        express: ExpressActivities,
        state: StateStore,
    ) -> None:
        self._purges = purges
        self._catalogs = catalogs
        self._express = express
        self._state = state

    def recorded(self, purge_id: str) -> PurgeReport | None:
        raw = self._state.read(self._state.uri(table_record_path(purge_id)))
        return PurgeReport.model_validate_json(raw) if raw is not None else None

    def run(self, table: BatchTable, retried: bool, ancestry: Ancestry) -> BatchTableOutcome:
        """A transient fault leaves as an exception (the batch is retried); a table's own
        refusal or failure ends its purge FAILED, as a workflow's would."""
        if retried and (report := self.recorded(table.purge_id)) is not None:
            return BatchTableOutcome(purge_id=table.purge_id, report=report)
        progress = Progress(pending_status(table.purge_id, table.request, _now()), _Unpublished())
        try:
            self._steps(table, progress, retried, ancestry)
        except HandedBackError as handed:
            return BatchTableOutcome(purge_id=table.purge_id, handed_back=handed.why)
        except ApplicationError as error:
            if not error.non_retryable:
                raise
            progress.failed(error.message, error.type, _now())
        report = report_at(progress.status, _now())
        self._state.write(self._state.uri(table_record_path(table.purge_id)), report)
        return BatchTableOutcome(purge_id=table.purge_id, report=report)

    def _steps(self, table: BatchTable, progress: Progress, retried: bool, ancestry: Ancestry) -> None:
        purge_id, request = table.purge_id, table.request
        ref = TableRef.of(purge_id, request)
        folder = self._purges.plan_folder(purge_id)
        kept_uri = f"{folder}/kept-plan.json"
        kept = self._kept(kept_uri) if retried else None
        progress.move_to(PurgeState.LOADING, _now())
        loaded = self._load(ref, ancestry, dropped_before=kept is not None)
        if kept is not None and loaded is not None and loaded.metadata_location != kept.metadata_location:
            raise HandedBackError(
                f"{ref.name} changed since an earlier attempt planned it (now at {loaded.metadata_location})"
            )
        if kept is None and loaded is not None:
            request = resolved(request, loaded)
            plan = self._purges.plan_held(PlanInput(purge_id=purge_id, request=request))
            if not finishes_at_once(plan):
                raise HandedBackError(
                    f"its plan holds {plan.planned.files:,} files, more than a batch takes at once"
                )
            kept = KeptPlan(
                metadata_location=loaded.metadata_location, protection=loaded.protection, plan=plan
            )
            self._state.write(kept_uri, kept, compress=True)
        elif kept is not None:
            properties = (
                loaded.file_io_properties if loaded else self._catalogs.catalog_io_properties(ref.catalog)
            )
            again = LoadedTable(
                metadata_location=kept.metadata_location,
                file_io_properties=properties,
                protection=kept.protection,
            )
            request = resolved(request, again)
        if kept is None:
            raise ApplicationError(
                "a batch's table has neither a loaded table nor a kept plan", non_retryable=True
            )
        progress.loaded(kept.protection, kept.metadata_location)
        progress.planned(kept.plan, _now())
        progress.move_to(PurgeState.DROPPING, _now())
        drop = DropInput(
            table=ref, metadata_location=kept.metadata_location, file_io_properties=request.file_io_properties
        )
        storage_gone = self._dropped(drop, f"{folder}/dropped.json", loaded is not None)
        progress.dropped(_now(), storage_gone)
        if storage_gone:
            request = checking_existence(request)
        progress.move_to(PurgeState.DELETING, _now())
        self._finish(purge_id, request, kept, progress)

    def _kept(self, uri: str) -> KeptPlan | None:
        raw = self._state.read(uri)
        return KeptPlan.model_validate_json(raw) if raw is not None else None

    def _load(self, ref: TableRef, ancestry: Ancestry, dropped_before: bool) -> LoadedTable | None:
        """None: gone from the catalog after an earlier attempt kept its plan (that attempt's
        drop, most likely); the kept plan goes on from there."""
        try:
            with catalog_retries_bounded():
                return self._catalogs.load(ref, ancestry)
        except ApplicationError as error:
            if error.type == ERROR_TABLE_NOT_FOUND and dropped_before:
                return None
            raise

    def _dropped(self, drop: DropInput, record_uri: str, in_catalog: bool) -> bool:
        """Drops the entry (still in the catalog) or finds the earlier attempt's drop recorded;
        either way, whether the catalog took the storage with it (a catalog that never does needs
        no record)."""
        if self._catalogs.keeps_storage_on_drop(drop.table.catalog):
            if in_catalog:
                self._drop(drop)
            return False
        if in_catalog:
            storage_gone = self._drop(drop)
        elif (raw := self._state.read(record_uri)) is not None:
            return DropRecord.model_validate_json(raw).storage_gone
        else:
            # Gone before its drop was recorded: nothing of it was deleted yet.
            storage_gone = self._catalogs.storage_gone(drop)
        self._state.write(record_uri, DropRecord(storage_gone=storage_gone))
        return storage_gone

    def _drop(self, drop: DropInput) -> bool:
        try:
            with catalog_retries_bounded():
                return self._catalogs.drop_table(drop).storage_gone
        except ApplicationError as error:
            if error.type == ERROR_TABLE_CHANGED:
                raise HandedBackError(error.message) from None
            raise

    def _finish(self, purge_id: str, request: PurgeRequest, kept: KeptPlan, progress: Progress) -> None:
        result = self._express.finish(
            FinishInput(purge_id=purge_id, request=request, plan=kept.plan, guards=[kept.protection])
        )
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
