"""A purge's catalog work: load a table by name (with its protection), drop its entry without
purge, the live-table guard, and registering it again on undrop. The catalog step activities
(catalog_activities.py), the express lane, a batch's tables and holds all call it.

Catalog errors leave redacted (icepurge/activities/catalog/catalog_calls.py).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

from pyiceberg.exceptions import NoSuchTableError, TableAlreadyExistsError
from temporalio.exceptions import ApplicationError

from icepurge.activities import heartbeats
from icepurge.activities.catalog.catalog_calls import CatalogCalls, admitted
from icepurge.activities.signals.progress_signals import ProgressSignals
from icepurge.catalogs.admission import CatalogAdmission
from icepurge.catalogs.guard_cohort import GuardParty
from icepurge.catalogs.io_properties import file_io_properties
from icepurge.catalogs.kind import CatalogKind
from icepurge.catalogs.live_tables import LiveTableScanner, PurgedTable, named
from icepurge.catalogs.protection import protected, protected_ancestor
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
    ERROR_IDENTIFIER_TAKEN,
    ERROR_PROTECTED,
    ERROR_TABLE_CHANGED,
    ERROR_TABLE_NOT_FOUND,
    LIVE_TABLE_GUARD_ACTIVITY,
    LOAD_TABLE_ACTIVITY,
    PROTECTED_PROPERTY,
    REGISTER_TABLE_ACTIVITY,
)
from icepurge.contract.status import GuardName, GuardOutcome
from icepurge.stores.registry import open_store
from icepurge.stores.store import StoreContext

log = logging.getLogger(__name__)
# Per namespace: the protected level above it, if any, and the catalog calls that took.
Ancestry = dict[tuple[str, ...], tuple[str | None, int]]


class TableCatalog(CatalogCalls):
    def __init__(
        self,
        admission: CatalogAdmission,
        scanner: LiveTableScanner,
        signals: ProgressSignals | None = None,
        heartbeat: Callable[[], None] = heartbeats.heartbeat,
    ) -> None:
        super().__init__(admission.registry, signals)
        self._admission = admission
        self._scanner = scanner
        self._heartbeat = heartbeat

    def load(self, ref: TableRef, ancestry: Ancestry, held_at: TableRef | None = None) -> LoadedTable:
        """`ancestry`: what namespaces said of protection, shared by loads moments apart (one
        batch's tables share their namespaces). `held_at`: where the table is held for its purge
        (options.hold_namespace), loaded from there; its protection is still its own name's."""
        with self._step(LOAD_TABLE_ACTIVITY):
            kind = self._kind(ref.catalog)
            identifier = (held_at or ref).identifier
            try:
                table = kind.load(identifier)
            except NoSuchTableError:
                raise ApplicationError(
                    f"catalog {ref.catalog!r} has no table {'.'.join(identifier)}",
                    type=ERROR_TABLE_NOT_FOUND,
                    non_retryable=True,
                ) from None
            protection = self._protection(kind, ref, table.properties, ancestry)
            return LoadedTable(
                metadata_location=table.metadata_location,
                file_io_properties=file_io_properties(table.io.properties),
                protection=protection,
            )

    def _protection(
        self, kind: CatalogKind, ref: TableRef, properties: dict[str, str], ancestry: Ancestry
    ) -> GuardOutcome:
        holder = f"table {ref.name}" if protected(properties) else None
        calls = 1
        if holder is None:
            levels = tuple(ref.namespace)
            known = ancestry.get(levels)
            if known is None:
                known = ancestry[levels] = protected_ancestor(kind, ref.namespace)
                calls += known[1]
            holder = known[0]
        if holder is not None:
            raise ApplicationError(
                f"{holder} says {PROTECTED_PROPERTY}=true: {ref.name} is never dropped or purged by "
                f"name; remove the property to allow it",
                type=ERROR_PROTECTED,
                non_retryable=True,
            )
        return GuardOutcome(
            guard=GuardName.PROTECTION,
            applied=True,
            passed=True,
            detail=f"neither the table nor its {len(ref.namespace)} namespace level(s) are protected",
            catalog_calls=calls,
        )

    def drop(self, step: DropInput) -> DropResult:
        """Drops the entry only while it still points at the planned snapshot: a commit since
        planning would leave its new files out of the plan."""
        with self._step(DROP_TABLE_ACTIVITY):
            kind = self._kind(step.table.catalog)
            dropped = self._drop_if_planned(kind, step)
            keeps_storage = kind.capabilities.keeps_storage_on_drop
            return DropResult(dropped=dropped, storage_gone=not keeps_storage and self.storage_gone(step))

    @staticmethod
    def _drop_if_planned(kind: CatalogKind, step: DropInput) -> bool:
        """False when the entry was already gone (a retried drop)."""
        identifier = step.table.identifier
        try:
            if not kind.drop_if_current(identifier, step.metadata_location):
                current = kind.load(identifier).metadata_location
                if current != step.metadata_location:
                    raise ApplicationError(
                        f"{step.table.name} changed since it was planned (now at {current}); nothing was "
                        "dropped or deleted: purge it by name again",
                        type=ERROR_TABLE_CHANGED,
                        non_retryable=True,
                    )
                kind.drop(identifier)
        except NoSuchTableError:
            return False
        log.info("dropped the catalog entry of %s for purge %s", step.table.name, step.table.purge_id)
        return True

    @staticmethod
    def storage_gone(step: DropInput) -> bool:
        """Some catalogs delete a table's storage when they drop it (S3 Tables): its metadata
        file is the first thing any purge would find gone."""
        store = open_store(step.metadata_location, StoreContext(step.file_io_properties))
        return store.head(step.metadata_location) is None

    def keeps_storage_on_drop(self, name: str) -> bool:
        return self._kind(name).capabilities.keeps_storage_on_drop

    def catalog_io_properties(self, name: str) -> dict[str, str]:
        """The FileIO properties a table of this catalog gets from the catalog itself (not those
        it vends per table): what is left to a purge whose table was dropped before it loaded."""
        return file_io_properties(self._catalog(name).properties)

    def guard(self, step: GuardInput, party: GuardParty | None = None) -> GuardOutcome:
        """Refusal is the workflow's to make: this reports what it found. A batch's table is a
        `party` of the batch's guards."""
        with self._step(LIVE_TABLE_GUARD_ACTIVITY):
            unguarded = admitted(self._admission, step.table.catalog)
            if unguarded is not None:
                return guard_not_applied(unguarded)
            started = time.monotonic()
            purged = PurgedTable(
                catalog=step.table.catalog,
                identifier=step.table.identifier,
                metadata_location=step.metadata_location,
                locations=tuple(step.locations),
                party=party,
            )
            scan = self._scanner.scan(
                self._catalog(step.table.catalog),
                purged,
                step.scope,
                self._heartbeat,
                skip_own=step.skip_own_entry,
            )
            detail = scan.refusal or (
                f"no live table in {step.scope.value} scope uses the purged metadata or locations"
            )
            if scan.unloadable:
                detail += f"; could not load {len(scan.unloadable)}: {named(scan.unloadable)}"
            return GuardOutcome(
                guard=GuardName.LIVE_TABLE,
                applied=True,
                passed=scan.refusal is None,
                detail=detail,
                catalog_calls=scan.catalog_calls,
                tables_compared=scan.tables_compared,
                seconds=round(time.monotonic() - started, 3),
            )

    def register(self, step: RegisterInput) -> RegisterResult:
        with self._step(REGISTER_TABLE_ACTIVITY):
            name = step.table.name
            if not self._registry.knows(step.table.catalog):
                return RegisterResult(
                    registered=False,
                    note=f"catalog {step.table.catalog!r} is not configured here: register {name} at "
                    f"{step.metadata_location} yourself",
                )
            kind = self._kind(step.table.catalog)
            try:
                kind.register(step.table.identifier, step.metadata_location)
            except TableAlreadyExistsError:
                try:
                    current = kind.load(step.table.identifier).metadata_location
                except NoSuchTableError:
                    current = None
                if current == step.metadata_location:
                    # A retried registration that went through the first time.
                    return RegisterResult(registered=True, note=f"{name} registered at {current}")
                raise ApplicationError(
                    f"{name} is taken by another table meanwhile; rename or drop it, then undrop again",
                    type=ERROR_IDENTIFIER_TAKEN,
                    non_retryable=True,
                ) from None
            return RegisterResult(registered=True, note=f"{name} registered at {step.metadata_location}")
