"""Each attempt of the enumeration writes a table list of its own: one that the server (or the
workflow, for the attempt inside its task) gave up on and that is still walking can't mix its pages
into the list the purge goes on with."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from pyiceberg.catalog.sql import SqlCatalog
from temporalio.testing import ActivityEnvironment

from icepurge.activities.namespace.namespace_activities import NamespaceActivities
from icepurge.activities.namespace.table_lists import TableLists
from icepurge.catalogs.configured import CatalogRegistry
from icepurge.contract.namespace_steps import EnumerateInput, EnumerationSummary
from icepurge.state.state_store import StateStore
from tests.tables import simple_table


def _enumerated(
    activities: NamespaceActivities, step: EnumerateInput, attempt: int, local: bool = False
) -> EnumerationSummary:
    environment = ActivityEnvironment()
    environment.info = dataclasses.replace(environment.info, attempt=attempt, is_local=local)
    summary: EnumerationSummary = environment.run(activities.enumerate_namespace, step)
    return summary


@pytest.mark.parametrize("first_in_task", [False, True])
def test_a_later_attempt_writes_its_own_list_and_leaves_the_earlier_one_whole(
    tmp_path: Path, first_in_task: bool
) -> None:
    """The attempt inside the workflow task and the activity's first are both attempt 1."""
    properties = {"uri": f"sqlite:///{tmp_path}/c.db", "warehouse": f"file://{tmp_path}/w"}
    catalog = SqlCatalog("lake", **properties)
    for index in range(4):
        simple_table(catalog, ("ns",), f"t{index}", appends=0)
    state = StateStore(f"file://{tmp_path}/state", {})
    lists = TableLists(state)
    activities = NamespaceActivities(
        CatalogRegistry({"lake": {"type": "sql", **properties}}), state, lists, None, 3
    )
    step = EnumerateInput(purge_id="p", catalog="lake", namespace=["ns"], nested=False, run_chain="run")
    first = _enumerated(activities, step, attempt=1, local=first_in_task)
    # The catalog changes between the attempts, as it may while an attempt is given up on.
    catalog.drop_table(("ns", "t0"))
    simple_table(catalog, ("ns",), "t9", appends=0)
    simple_table(catalog, ("ns",), "t8", appends=0)
    second = _enumerated(activities, step, attempt=1 if first_in_task else 2)
    assert first.tree_location != second.tree_location
    if first_in_task:
        assert "/run/local-attempt-1/" in first.tree_location and "/run/attempt-1/" in second.tree_location
    else:
        assert "/run/attempt-1/" in first.tree_location and "/run/attempt-2/" in second.tree_location
    assert [name.table for name in TableLists(state).names(first.tree_location, 0, 100)] == [
        "t0",
        "t1",
        "t2",
        "t3",
    ]
    assert [name.table for name in TableLists(state).names(second.tree_location, 0, 100)] == [
        "t1",
        "t2",
        "t3",
        "t8",
        "t9",
    ]
    assert (first.tables_total, second.tables_total) == (4, 5)
