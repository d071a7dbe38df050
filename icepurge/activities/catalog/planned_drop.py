"""A table loaded, planned and dropped inside one activity: the plan is kept in the state location
before the drop, the drop recorded after it (for catalogs that take the storage with them), so an
attempt after a crash that dropped the table goes on from what the crashed one kept instead of
finding nothing to load. Used by the express lane's load_plan_and_drop and by each table of a
small-table batch."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from temporalio.exceptions import ApplicationError

from icepurge.activities.catalog.catalog_retries import catalog_retries_bounded
from icepurge.activities.catalog.table_catalog import Ancestry, TableCatalog
from icepurge.contract.catalog_steps import DropInput, LoadedTable, TableRef, checking_existence, resolved
from icepurge.contract.names import ERROR_TABLE_NOT_FOUND
from icepurge.contract.request import PurgeRequest
from icepurge.contract.status import GuardOutcome
from icepurge.contract.steps import PlanInput, PlanSummary
from icepurge.contract.strict_model import StrictModel
from icepurge.state.state_store import StateStore


class KeptPlan(StrictModel):
    """Written before the drop: after it, the table's snapshot is known from here alone. No
    FileIO properties (they may hold credentials): a retry takes them from the catalog."""

    metadata_location: str
    protection: GuardOutcome
    plan: PlanSummary


class DropRecord(StrictModel):
    """Written right after the drop, before any delete: a retry that finds the table gone learns
    here whether the catalog took its storage, which its own deletes would otherwise mimic."""

    storage_gone: bool


class TableChangedError(Exception):
    """Nothing of the table was dropped or deleted: it changed since an earlier attempt kept its
    plan. (A change between this attempt's plan and its drop is the drop's own
    ERROR_TABLE_CHANGED.)"""

    def __init__(self, why: str) -> None:
        super().__init__(why)
        self.why = why


@dataclass(frozen=True)
class DropAttempt:
    """One attempt at a table's plan and drop. `folder`: the run's own plan folder, where the plan
    and the drop are kept; `ancestry`: what namespaces said of protection, shared by loads moments
    apart (a batch's tables)."""

    ref: TableRef
    request: PurgeRequest
    folder: str
    retried: bool
    ancestry: Ancestry = field(default_factory=dict)


@dataclass(frozen=True)
class DroppedTable:
    """`request`: resolved to the loaded snapshot, and checking existence when the catalog took
    the storage."""

    loaded: LoadedTable
    kept: KeptPlan
    storage_gone: bool
    request: PurgeRequest


class PlannedDrops:
    def __init__(self, catalogs: TableCatalog, state: StateStore) -> None:
        self._catalogs = catalogs
        self._state = state

    def run(self, attempt: DropAttempt, plan: Callable[[PlanInput], PlanSummary]) -> DroppedTable:
        """`plan` may refuse a plan by raising before anything is dropped."""
        ref, request, folder = attempt.ref, attempt.request, attempt.folder
        retried, ancestry = attempt.retried, attempt.ancestry
        kept_uri = f"{folder}/kept-plan.json"
        kept = self._kept(kept_uri) if retried else None
        found = self._load(ref, ancestry, dropped_before=kept is not None)
        if kept is not None and found is not None and found.metadata_location != kept.metadata_location:
            raise TableChangedError(
                f"{ref.name} changed since an earlier attempt planned it (now at {found.metadata_location})"
            )
        if kept is None:
            if found is None:
                raise ApplicationError("neither a loaded table nor a kept plan", non_retryable=True)
            loaded = found
            request = resolved(request, loaded)
            planned = plan(PlanInput(purge_id=ref.purge_id, request=request))
            kept = KeptPlan(
                metadata_location=loaded.metadata_location, protection=loaded.protection, plan=planned
            )
            self._state.write(kept_uri, kept, compress=True)
        else:
            properties = (
                found.file_io_properties if found else self._catalogs.catalog_io_properties(ref.catalog)
            )
            loaded = LoadedTable(
                metadata_location=kept.metadata_location,
                file_io_properties=properties,
                protection=kept.protection,
            )
            request = resolved(request, loaded)
        drop = DropInput(
            table=ref, metadata_location=kept.metadata_location, file_io_properties=request.file_io_properties
        )
        storage_gone = self._dropped(drop, f"{folder}/dropped.json", in_catalog=found is not None)
        if storage_gone:
            request = checking_existence(request)
        return DroppedTable(loaded=loaded, kept=kept, storage_gone=storage_gone, request=request)

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
        """A table changed since the plan stays in its catalog: ERROR_TABLE_CHANGED."""
        with catalog_retries_bounded():
            return self._catalogs.drop(drop).storage_gone
