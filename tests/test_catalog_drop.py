"""The drop of a purge by name: only while the entry points at the planned metadata file, once.
In a SQL catalog the check and the drop are one conditional statement; elsewhere a load checks
first. Both ways give the same answers: TableChanged (nothing dropped) for a table committed to
since its plan, dropped for the planned one, already gone for a retried drop."""

from __future__ import annotations

from pathlib import Path

import pytest
from temporalio.exceptions import ApplicationError
from temporalio.testing import ActivityEnvironment

from icepurge.activities.catalog.catalog_activities import CatalogActivities
from icepurge.activities.catalog.table_catalog import TableCatalog
from icepurge.catalogs.admission import CatalogAdmission
from icepurge.catalogs.configured import CatalogRegistry
from icepurge.catalogs.live_tables import FootprintCache, LiveTableScanner
from icepurge.catalogs.sql import SqlCatalogKind
from icepurge.contract.catalog_steps import DropInput, TableRef
from icepurge.contract.names import ERROR_TABLE_CHANGED
from tests.tables import SCHEMA


@pytest.mark.parametrize("conditional", [True, False], ids=["one statement", "load then drop"])
def test_a_drop_takes_only_the_planned_entry_and_only_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, conditional: bool
) -> None:
    if not conditional:
        monkeypatch.setattr(SqlCatalogKind, "drop_if_current", lambda *_: None)
    settings = {"type": "sql", "uri": f"sqlite:///{tmp_path / 'c.sqlite'}", "warehouse": tmp_path.as_uri()}
    registry = CatalogRegistry({"shop": settings})
    catalog = registry.catalog("shop")
    catalog.create_namespace(("sales",))
    planned = catalog.create_table(("sales", "orders"), schema=SCHEMA).metadata_location
    with catalog.load_table(("sales", "orders")).transaction() as change:
        change.set_properties({"committed": "after the plan"})
    current = catalog.load_table(("sales", "orders")).metadata_location
    activities = CatalogActivities(
        TableCatalog(CatalogAdmission(registry, []), LiveTableScanner(FootprintCache(0), 1))
    )
    ref = TableRef(purge_id="p", catalog="shop", namespace=["sales"], table="orders")
    run = ActivityEnvironment().run

    with pytest.raises(ApplicationError) as changed:
        run(activities.drop_table, DropInput(table=ref, metadata_location=planned))
    assert (changed.value.type, changed.value.non_retryable) == (ERROR_TABLE_CHANGED, True)
    assert current in changed.value.message
    assert catalog.table_exists(("sales", "orders"))

    first = run(activities.drop_table, DropInput(table=ref, metadata_location=current))
    assert (first.dropped, first.storage_gone) == (True, False)
    assert not catalog.table_exists(("sales", "orders"))
    again = run(activities.drop_table, DropInput(table=ref, metadata_location=current))
    assert (again.dropped, again.storage_gone) == (False, False)
