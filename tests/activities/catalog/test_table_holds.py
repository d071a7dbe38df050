"""The hold step on its own, in a SQL catalog: an attempt that follows one whose rename went
through holds nothing else, even when a new table took the old name since (a retry; or an
attempt 1: the activity after the workflow task's own attempt, or that attempt again after its
workflow task timed out); an attempt whose
rename loses to a timed-out attempt's late one finds the table held under the run's name; a
hold whose rename misses the hold namespace while another hold makes it holds its table all the
same; a table that is nowhere is not found."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from pyiceberg.catalog import Catalog
from pyiceberg.table import Table
from pyiceberg.typedef import EMPTY_DICT, Identifier, Properties
from temporalio.exceptions import ApplicationError
from temporalio.testing import ActivityEnvironment

from icepurge.activities.catalog.table_catalog import TableCatalog
from icepurge.activities.catalog.table_holds import TableHolds, held_ref
from icepurge.catalogs.admission import CatalogAdmission
from icepurge.catalogs.configured import CatalogRegistry
from icepurge.catalogs.live_tables import FootprintCache, LiveTableScanner
from icepurge.contract.catalog_steps import HoldInput, TableRef
from icepurge.contract.names import ERROR_TABLE_NOT_FOUND
from tests.tables import SCHEMA

RUN_ID = "0192f4c7-6d3e-7a1b-9c2d-3e4f5a6b7c8d"
HOLD_NAMESPACE = "held"


def _holds(tmp_path: Path) -> tuple[TableHolds, Catalog]:
    settings = {"type": "sql", "uri": f"sqlite:///{tmp_path / 'c.sqlite'}", "warehouse": tmp_path.as_uri()}
    registry = CatalogRegistry({"shop": settings})
    catalogs = TableCatalog(CatalogAdmission(registry, []), LiveTableScanner(FootprintCache(0), 1))
    return TableHolds(catalogs), registry.catalog("shop")


def _sales_orders(catalog: Catalog) -> tuple[Table, TableRef]:
    """The table every test holds, and its reference."""
    catalog.create_namespace(("sales",))
    original = catalog.create_table(("sales", "orders"), schema=SCHEMA)
    return original, TableRef(purge_id="p", catalog="shop", namespace=["sales"], table="orders")


def _environment(attempt: int, run_id: str = RUN_ID) -> ActivityEnvironment:
    environment = ActivityEnvironment()
    environment.info = dataclasses.replace(environment.info, workflow_run_id=run_id, attempt=attempt)
    return environment


@pytest.mark.parametrize("next_attempt", [2, 1])
def test_a_hold_is_idempotent_and_never_takes_a_table_created_since(
    tmp_path: Path, next_attempt: int
) -> None:
    holds, catalog = _holds(tmp_path)
    original, ref = _sales_orders(catalog)
    step = HoldInput(table=ref, hold_namespace=HOLD_NAMESPACE)
    held = held_ref(ref, HOLD_NAMESPACE, RUN_ID)
    assert held.identifier == (HOLD_NAMESPACE, "icepurge_" + RUN_ID.replace("-", ""))

    first = _environment(1).run(holds.hold_table, step)
    assert first.held == held and first.loaded.metadata_location == original.metadata_location
    assert catalog.load_table(held.identifier).metadata_location == original.metadata_location
    newcomer = catalog.create_table(("sales", "orders"), schema=SCHEMA, location=f"{original.location()}-new")

    # Its answer lost, the step runs again: the held table answers, the newcomer stays.
    retried = _environment(next_attempt).run(holds.hold_table, step)
    assert retried == first
    assert catalog.load_table(("sales", "orders")).metadata_location == newcomer.metadata_location
    assert [identifier for identifier in catalog.list_tables(HOLD_NAMESPACE)] == [held.identifier]


def test_an_attempt_that_loses_to_a_late_rename_finds_the_table_held(tmp_path: Path) -> None:
    holds, catalog = _holds(tmp_path)
    original, ref = _sales_orders(catalog)
    held = held_ref(ref, HOLD_NAMESPACE, RUN_ID)
    # A timed-out attempt's rename, landing before this attempt loads the table.
    catalog.create_namespace((HOLD_NAMESPACE,))
    catalog.rename_table(("sales", "orders"), held.identifier)

    found = _environment(1).run(holds.hold_table, HoldInput(table=ref, hold_namespace=HOLD_NAMESPACE))
    assert found.held == held and found.loaded.metadata_location == original.metadata_location

    nowhere = ref.model_copy(update={"table": "never"})
    with pytest.raises(ApplicationError) as missing:
        _environment(1, "another-run").run(
            holds.hold_table, HoldInput(table=nowhere, hold_namespace=HOLD_NAMESPACE)
        )
    assert (missing.value.type, missing.value.non_retryable) == (ERROR_TABLE_NOT_FOUND, True)


def test_a_hold_that_misses_the_namespace_another_hold_makes_meanwhile_holds_its_table(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    holds, catalog = _holds(tmp_path)
    original, ref = _sales_orders(catalog)
    rename = catalog.rename_table

    def another_hold_makes_the_namespace_after_the_rename_missed_it(
        source: str | Identifier, target: str | Identifier
    ) -> object:
        try:
            return rename(source, target)
        except Exception:
            catalog.create_namespace_if_not_exists((HOLD_NAMESPACE,))
            raise

    # Two holds into a namespace that doesn't exist yet, interleaved: this one's rename fails for
    # want of the namespace, the other makes it before this one looks.
    monkeypatch.setattr(catalog, "rename_table", another_hold_makes_the_namespace_after_the_rename_missed_it)
    found = _environment(1).run(holds.hold_table, HoldInput(table=ref, hold_namespace=HOLD_NAMESPACE))

    held = held_ref(ref, HOLD_NAMESPACE, RUN_ID)
    assert found.held == held and found.loaded.metadata_location == original.metadata_location
    assert catalog.load_table(held.identifier).metadata_location == original.metadata_location
    assert not catalog.table_exists(("sales", "orders"))


def test_a_hold_whose_namespace_creation_loses_the_race_to_another_hold_holds_its_table(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    holds, catalog = _holds(tmp_path)
    original, ref = _sales_orders(catalog)
    exists, create = catalog.namespace_exists, catalog.create_namespace
    other_holds = [lambda: create((HOLD_NAMESPACE,))]

    def another_hold_makes_it_between_check_and_insert(namespace: str | Identifier) -> bool:
        found = exists(namespace)
        if other_holds:
            other_holds.pop()()
        return found

    def creating(namespace: str | Identifier, properties: Properties = EMPTY_DICT) -> None:
        # PyIceberg's SQL catalog checks, then inserts: a concurrent create fails on the insert.
        with monkeypatch.context() as racing:
            racing.setattr(catalog, "namespace_exists", another_hold_makes_it_between_check_and_insert)
            create(namespace, properties)

    monkeypatch.setattr(catalog, "create_namespace", creating)
    found = _environment(1).run(holds.hold_table, HoldInput(table=ref, hold_namespace=HOLD_NAMESPACE))

    held = held_ref(ref, HOLD_NAMESPACE, RUN_ID)
    assert not other_holds
    assert found.held == held and found.loaded.metadata_location == original.metadata_location
    assert catalog.load_table(held.identifier).metadata_location == original.metadata_location
