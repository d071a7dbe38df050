"""The catalog step activities (load, drop, the live-table guard, register): thin adapters over
the purge's catalog work (table_catalog.py), its errors redacted there."""

from __future__ import annotations

from icepurge.activities.catalog.table_catalog import TableCatalog
from icepurge.activities.step_definition import implements
from icepurge.contract.activity_steps import DROP_TABLE, LIVE_TABLE_GUARD, LOAD_TABLE, REGISTER_TABLE
from icepurge.contract.catalog_steps import (
    DropInput,
    DropResult,
    GuardInput,
    LoadedTable,
    RegisterInput,
    RegisterResult,
    TableRef,
)
from icepurge.contract.status import GuardOutcome


class CatalogActivities:
    def __init__(self, catalog: TableCatalog) -> None:
        self._catalog = catalog

    @implements(LOAD_TABLE)
    def load_table(self, ref: TableRef) -> LoadedTable:
        return self._catalog.load(ref, {})

    @implements(DROP_TABLE)
    def drop_table(self, step: DropInput) -> DropResult:
        """Drops the entry only while it still points at the planned snapshot: a commit since
        planning would leave its new files out of the plan."""
        return self._catalog.drop(step)

    @implements(LIVE_TABLE_GUARD)
    def check_live_tables(self, step: GuardInput) -> GuardOutcome:
        """Refusal is the workflow's to make: this reports what it found."""
        return self._catalog.guard(step)

    @implements(REGISTER_TABLE)
    def register_table(self, step: RegisterInput) -> RegisterResult:
        return self._catalog.register(step)
