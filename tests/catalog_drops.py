"""What a purge by name's drop promises, on any SQL catalog: only while the entry points at the
planned metadata file, and once. Shared by the SQLite and PostgreSQL tests."""

from __future__ import annotations

import pytest
from pyiceberg.catalog.sql import SqlCatalog
from sqlalchemy import text
from temporalio.exceptions import ApplicationError
from temporalio.testing import ActivityEnvironment

from icepurge.activities.catalog.catalog_activities import CatalogActivities
from icepurge.activities.catalog.table_catalog import TableCatalog
from icepurge.catalogs.admission import CatalogAdmission
from icepurge.catalogs.configured import CatalogRegistry
from icepurge.catalogs.live_tables import FootprintCache, LiveTableScanner
from icepurge.contract.catalog_steps import DropInput, TableRef
from icepurge.contract.names import ERROR_TABLE_CHANGED
from tests.tables import SCHEMA


def check_the_drop_takes_only_the_planned_entry_once(name: str, settings: dict[str, str]) -> None:
    """A table committed to since its plan: TableChanged, nothing dropped; the current one:
    dropped; again: already gone."""
    registry = CatalogRegistry({name: settings})
    catalog = registry.catalog(name)
    catalog.create_namespace(("sales",))
    planned = catalog.create_table(("sales", "orders"), schema=SCHEMA).metadata_location
    with catalog.load_table(("sales", "orders")).transaction() as change:
        change.set_properties({"committed": "after the plan"})
    current = catalog.load_table(("sales", "orders")).metadata_location
    activities = CatalogActivities(
        TableCatalog(CatalogAdmission(registry, []), LiveTableScanner(FootprintCache(0), 1))
    )
    ref = TableRef(purge_id="p", catalog=name, namespace=["sales"], table="orders")
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


def other_engines_entry(catalog: SqlCatalog, namespace: str, name: str, kind: str) -> None:
    """A row as Iceberg Java's JDBC catalog writes a view (kind VIEW) into the same table."""
    with catalog.engine.begin() as connection:
        connection.execute(
            text(
                "INSERT INTO iceberg_tables (catalog_name, table_namespace, table_name, metadata_location, "
                "previous_metadata_location, iceberg_type) VALUES (:catalog, :namespace, :name, :location, "
                "NULL, :kind)"
            ),
            {
                "catalog": catalog.name,
                "namespace": namespace,
                "name": name,
                "location": f"s3://warehouse/{namespace}/{name}/metadata/00000.metadata.json",
                "kind": kind,
            },
        )
