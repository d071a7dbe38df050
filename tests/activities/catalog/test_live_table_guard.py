"""The live-table guard: right before the first delete, a purge refuses when the catalog holds a
table using the purged metadata or an overlapping location; without the catalog configured it
works as before and says the guard was not applied."""

from __future__ import annotations

import pytest
from pyiceberg.catalog.sql import SqlCatalog

from icepurge.api.clients.errors import PurgeFailedError
from icepurge.api.clients.temporal_client import PurgeClient
from icepurge.catalogs.live_tables import overlaps
from icepurge.contract.names import ERROR_LIVE_TABLE
from icepurge.contract.states import PurgeState
from icepurge.contract.status import GuardName
from icepurge.devstack.requests import request_for_table
from tests.conftest import LAKE_CATALOG
from tests.purge_helpers import request_for
from tests.store import S3Store
from tests.tables import rows, simple_table


@pytest.mark.parametrize(
    ("first", "second", "expected"),
    [
        ("s3://b/t", "s3://b/t/", True),
        ("s3a://b/t", "s3://b/t/data", True),
        ("s3://b/t/data", "s3n://b//t", True),
        ("s3://b/t", "s3://b/t2", False),
        ("s3://b/t", "s3://other/t", False),
        ("file:///w/t", "/w/t/x", True),
    ],
)
def test_locations_overlap_when_equal_parent_or_child(first: str, second: str, expected: bool) -> None:
    assert overlaps(first, second) is expected
    assert overlaps(second, first) is expected


async def test_a_table_recreated_at_the_same_location_stops_the_old_snapshots_purge(
    lake: SqlCatalog, purges: PurgeClient, s3: S3Store
) -> None:
    old = simple_table(lake, ("guard",), "reborn", appends=2)
    snapshot = request_for_table(LAKE_CATALOG, old, s3.properties, "pytest")
    lake.drop_table(("guard", "reborn"))
    new = simple_table(lake, ("guard",), "reborn", appends=1)
    assert new.location() == old.location()
    before = s3.list(old.location())
    with pytest.raises(PurgeFailedError) as refused:
        await purges.wait(await purges.start(snapshot))
    assert refused.value.error_type == ERROR_LIVE_TABLE
    assert "guard.reborn" in refused.value.reason and "nothing was deleted" in refused.value.reason
    assert s3.list(old.location()) == before
    assert lake.load_table(("guard", "reborn")).scan().to_arrow().num_rows == 10


async def test_a_table_inside_the_purged_location_stops_a_purge_by_name_until_it_goes(
    lake: SqlCatalog, purges: PurgeClient, s3: S3Store
) -> None:
    parent = simple_table(lake, ("guard", "nest"), "parent", appends=2)
    child = lake.create_table(
        ("guard", "nest", "child"), schema=parent.schema(), location=f"{parent.location()}/child-table"
    )
    child.append(rows(0, 5))
    before = s3.list(parent.location())
    purge_id = await purges.purge_by_name(LAKE_CATALOG, ["guard", "nest"], "parent", requested_by="pytest")
    with pytest.raises(PurgeFailedError) as refused:
        await purges.wait(purge_id)
    assert refused.value.error_type == ERROR_LIVE_TABLE
    assert "guard.nest.child" in refused.value.reason
    status = await purges.status(purge_id)
    guard = next(guard for guard in status.guards if guard.guard is GuardName.LIVE_TABLE)
    assert guard.applied and not guard.passed and guard.tables_compared >= 1 and guard.catalog_calls >= 2
    assert status.files_done == 0
    assert s3.list(parent.location()) == before
    assert lake.load_table(("guard", "nest", "child")).scan().to_arrow().num_rows == 5
    # Once the child is gone from the catalog, a rerun finishes from the snapshot the purge
    # loaded (the parent is no longer in the catalog to load by name).
    lake.drop_table(("guard", "nest", "child"))
    await purges.rerun(purge_id)
    report = await purges.wait(purge_id)
    assert report.status.state is PurgeState.SUCCEEDED
    assert report.status.metadata_location == parent.metadata_location
    assert s3.list(parent.location()) == s3.list(child.location())


async def test_without_the_catalog_configured_the_purge_runs_as_before_and_says_so(
    catalog: SqlCatalog, purges: PurgeClient, s3: S3Store
) -> None:
    old = simple_table(catalog, ("guard",), "reborn_unknown", appends=2)
    request = request_for(old, s3.properties)
    catalog.drop_table(("guard", "reborn_unknown"))
    simple_table(catalog, ("guard",), "reborn_unknown", appends=1)
    report = await purges.wait(await purges.start(request))
    assert report.status.state is PurgeState.SUCCEEDED
    guard = next(guard for guard in report.status.guards if guard.guard is GuardName.LIVE_TABLE)
    assert not guard.applied and "not configured" in guard.detail
    # Only what the old snapshot reaches was deleted: the new table's own files are new names.
    assert catalog.load_table(("guard", "reborn_unknown")).scan().to_arrow().num_rows == 10


async def test_catalog_scope_finds_an_overlapping_table_in_another_namespace(
    lake: SqlCatalog, purges: PurgeClient, s3: S3Store
) -> None:
    purged = simple_table(lake, ("guard", "left"), "wide", appends=1)
    lake.create_namespace_if_not_exists(("guard", "right"))
    lake.create_table(
        ("guard", "right", "squatter"), schema=purged.schema(), location=f"{purged.location()}/x"
    )
    before = s3.list(purged.location())
    purge_id = await purges.purge_by_name(
        LAKE_CATALOG, ["guard", "left"], "wide", requested_by="pytest", options={"overlap_scope": "catalog"}
    )
    with pytest.raises(PurgeFailedError) as refused:
        await purges.wait(purge_id)
    assert "guard.right.squatter" in refused.value.reason
    assert s3.list(purged.location()) == before
