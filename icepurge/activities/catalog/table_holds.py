"""A table held for its purge (options.hold_namespace): renamed into the hold namespace under
its purge run's own name, so its identifier is free at once whatever the table's size, and its
files stay whole for the plan that follows; renamed back on undrop. The held name is the run's
alone: a retry that finds it taken knows its own earlier attempt moved the table, and never
holds a table re-created under the old name since."""

from __future__ import annotations

from pyiceberg.exceptions import (
    NoSuchNamespaceError,
    NoSuchTableError,
    TableAlreadyExistsError,
)
from temporalio import activity
from temporalio.exceptions import ApplicationError

from icepurge.activities.catalog.catalog_calls import CatalogCalls
from icepurge.activities.catalog.catalog_retries import bounded
from icepurge.activities.catalog.table_catalog import Ancestry, TableCatalog
from icepurge.activities.signals.progress_signals import ProgressSignals
from icepurge.activities.step_definition import implements
from icepurge.catalogs.kind import CatalogKind
from icepurge.catalogs.namespace_creation import ensure_namespace
from icepurge.contract.activity_steps import HOLD_TABLE, RELEASE_HELD_TABLE
from icepurge.contract.catalog_steps import (
    HeldTable,
    HoldInput,
    LoadedTable,
    RegisterResult,
    ReleaseInput,
    TableRef,
)
from icepurge.contract.names import (
    ERROR_IDENTIFIER_TAKEN,
    ERROR_TABLE_NOT_FOUND,
    HOLD_TABLE_ACTIVITY,
    RELEASE_HELD_TABLE_ACTIVITY,
)

HELD_NAME_PREFIX = "icepurge_"


def held_ref(table: TableRef, hold_namespace: str, run_id: str) -> TableRef:
    """Lowercase letters, digits and underscores: a name every catalog takes (S3 Tables' rules)."""
    name = HELD_NAME_PREFIX + run_id.replace("-", "").lower()
    return table.model_copy(update={"namespace": [hold_namespace], "table": name})


class TableHolds(CatalogCalls):
    def __init__(self, catalogs: TableCatalog, signals: ProgressSignals | None = None) -> None:
        super().__init__(catalogs.registry, signals)
        self._catalogs = catalogs

    @implements(HOLD_TABLE)
    def hold_table(self, step: HoldInput) -> HeldTable:
        run_id = activity.info().workflow_run_id
        if run_id is None:
            raise ApplicationError("a table is held by a purge's own run only", non_retryable=True)
        held = held_ref(step.table, step.hold_namespace, run_id)
        # First, always: an attempt may follow one whose rename went through (a retry, or the
        # in-task attempt of a workflow task that timed out), and the old identifier may name a
        # table created since.
        if (earlier := self._held_before(step.table, held)) is not None:
            return HeldTable(loaded=earlier, held=held)
        try:
            loaded = bounded(lambda: self._catalogs.load(step.table, Ancestry()))
            with self._step(HOLD_TABLE_ACTIVITY):
                _rename_into(self._kind(step.table.catalog), step.table, held)
        except ApplicationError as error:
            # A timed-out attempt's rename may land while this one runs.
            if error.type != ERROR_TABLE_NOT_FOUND or (landed := self._held_before(step.table, held)) is None:
                raise
            return HeldTable(loaded=landed, held=held)
        return HeldTable(loaded=loaded, held=held)

    def _held_before(self, table: TableRef, held: TableRef) -> LoadedTable | None:
        """The table as an earlier attempt of this run held it (its rename went through, its
        answer was lost), if it did."""
        try:
            return bounded(lambda: self._catalogs.load(table, Ancestry(), held_at=held))
        except ApplicationError as error:
            if error.type == ERROR_TABLE_NOT_FOUND:
                return None
            raise

    @implements(RELEASE_HELD_TABLE)
    def release_held_table(self, step: ReleaseInput) -> RegisterResult:
        with self._step(RELEASE_HELD_TABLE_ACTIVITY):
            kind = self._kind(step.table.catalog)
            try:
                kind.rename(step.held.identifier, step.table.identifier)
            except TableAlreadyExistsError:
                raise ApplicationError(
                    f"{step.table.name} is taken by another table meanwhile; rename or drop it, then "
                    f"undrop again (the table waits as {'.'.join(step.held.identifier)})",
                    type=ERROR_IDENTIFIER_TAKEN,
                    non_retryable=True,
                ) from None
            except NoSuchTableError:
                if _current(kind, step.table) != step.metadata_location:
                    raise ApplicationError(
                        f"the held table {'.'.join(step.held.identifier)} is gone from catalog "
                        f"{step.table.catalog!r}: nothing to move back",
                        type=ERROR_TABLE_NOT_FOUND,
                        non_retryable=True,
                    ) from None
                # A retried release whose first rename went through.
            return RegisterResult(
                registered=True, note=f"{step.table.name} moved back from {'.'.join(step.held.identifier)}"
            )


def _rename_into(kind: CatalogKind, table: TableRef, held: TableRef) -> None:
    """The hold namespace is made by the first hold that misses it (a REST catalog says so as a
    missing table: 404); every later hold costs the rename alone. Whether the namespace exists
    after a failed rename says nothing: another hold may have made it since. The table's own
    existence says whether it was the one missing."""
    for attempt in (1, 2):
        try:
            kind.rename(table.identifier, held.identifier)
            return
        except (NoSuchTableError, NoSuchNamespaceError):
            if attempt == 2 or not kind.catalog.table_exists(table.identifier):
                raise ApplicationError(
                    f"catalog {table.catalog!r} has no table {'.'.join(table.identifier)}",
                    type=ERROR_TABLE_NOT_FOUND,
                    non_retryable=True,
                ) from None
            ensure_namespace(kind.catalog, (held.namespace[0],))


def _current(kind: CatalogKind, table: TableRef) -> str | None:
    try:
        return kind.load(table.identifier).metadata_location
    except NoSuchTableError:
        return None
