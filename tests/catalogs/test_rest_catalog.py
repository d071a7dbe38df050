"""A real Iceberg REST catalog: SeaweedFS's, one S3 Tables table bucket, SigV4. Its drop deletes
the table's storage itself (S3 Tables semantics): a purge by name through it plans first, so it
ends SUCCEEDED with every file reported already missing, and nothing else touched."""

from __future__ import annotations

import pytest
from pyiceberg.catalog.rest import RestCatalog

from icepurge.api.clients.errors import PurgeControlRejectedError, PurgeFailedError
from icepurge.api.clients.listing import PurgeFilter
from icepurge.api.clients.temporal_client import PurgeClient
from icepurge.api.clients.temporal_namespace_client import namespace_request
from icepurge.catalogs.live_tables import FootprintCache, LiveTableScanner, PurgedTable
from icepurge.catalogs.locations import table_locations
from icepurge.contract.names import ERROR_STORAGE_GONE
from icepurge.contract.namespace_status import NamespacePurgeState
from icepurge.contract.request import OverlapScope
from icepurge.contract.states import PurgeState
from icepurge.contract.status import GuardName
from icepurge.devstack.stack import EmbeddedStack
from icepurge.worker.settings import WorkerSettings
from tests.batch_records import all_batch_records
from tests.conftest import REST_CATALOG, REST_TABLE_BUCKET
from tests.purge_helpers import assert_counts_add_up, status_when
from tests.store import S3Store
from tests.tables import simple_table


@pytest.fixture(scope="module")
def rest(stack: EmbeddedStack) -> RestCatalog:
    properties = stack.rest_catalog_properties(REST_TABLE_BUCKET)
    properties.pop("type")
    return RestCatalog(REST_CATALOG, **properties)


async def test_purge_by_name_through_a_rest_catalog_that_deletes_storage_on_drop(
    rest: RestCatalog, purges: PurgeClient, s3: S3Store
) -> None:
    purged = simple_table(rest, ("ops", "daily"), "gone", appends=3)
    kept = simple_table(rest, ("ops", "daily"), "kept", appends=2)
    kept_files = s3.list(kept.location())
    assert s3.list(purged.location())
    purge_id = await purges.purge_by_name(REST_CATALOG, ["ops", "daily"], "gone", requested_by="pytest")
    report = await purges.wait(purge_id)
    status = report.status
    assert status.state is PurgeState.SUCCEEDED
    assert status.dropped_at is not None
    assert status.storage_deleted_by_catalog
    assert_counts_add_up(status)
    total = status.counts.total()
    assert total.already_missing == status.planned.files > 0
    assert total.deleted == 0
    guard = next(guard for guard in status.guards if guard.guard is GuardName.LIVE_TABLE)
    assert guard.applied and guard.passed and guard.tables_compared == 1
    assert ("ops", "daily", "gone") not in rest.list_tables(("ops", "daily"))
    assert s3.list(purged.location()) == set()
    assert s3.list(kept.location()) == kept_files
    assert rest.load_table(("ops", "daily", "kept")).scan().to_arrow().num_rows == 20


async def test_drop_before_plan_on_a_catalog_that_deletes_storage_says_so_and_leaves_nothing(
    rest: RestCatalog, purges: PurgeClient, s3: S3Store
) -> None:
    """The option is for catalogs that keep storage on drop; set wrongly, the purge fails with
    the reason and the catalog's own deletion has left nothing behind."""
    purged = simple_table(rest, ("ops", "swift"), "gone", appends=2)
    purge_id = await purges.purge_by_name(
        REST_CATALOG, ["ops", "swift"], "gone", requested_by="pytest", options={"drop_before_plan": True}
    )
    with pytest.raises(PurgeFailedError) as failed:
        await purges.wait(purge_id)
    assert failed.value.error_type == ERROR_STORAGE_GONE
    assert "drop_before_plan off" in str(failed.value)
    assert ("ops", "swift", "gone") not in rest.list_tables(("ops", "swift"))
    assert s3.list(purged.location()) == set()


async def test_undrop_is_refused_when_the_catalog_took_the_files_with_the_drop(
    rest: RestCatalog, purges: PurgeClient
) -> None:
    simple_table(rest, ("ops", "soft"), "taken_along", appends=1)
    purge_id = await purges.purge_by_name(
        REST_CATALOG,
        ["ops", "soft"],
        "taken_along",
        requested_by="pytest",
        options={"purge_after_seconds": 86_400},
    )
    scheduled = await status_when(purges, purge_id, lambda status: status.state is PurgeState.SCHEDULED)
    assert scheduled.storage_deleted_by_catalog
    with pytest.raises(PurgeControlRejectedError, match="nothing left to register"):
        await purges.undrop(purge_id)
    await purges.expedite(purge_id)
    report = await purges.wait(purge_id)
    assert report.status.state is PurgeState.SUCCEEDED
    assert report.status.counts.total().already_missing == report.status.planned.files


async def test_a_recursive_namespace_purge_drops_real_nested_namespaces_on_a_rest_catalog(
    rest: RestCatalog, purges: PurgeClient, s3: S3Store, worker_settings: WorkerSettings
) -> None:
    # SeaweedFS takes only [a-z0-9_-] in a level; unlike SQLite catalogs it keeps levels apart.
    tables = {
        ("rtree",): "t0",
        ("rtree", "sub"): "t1",
        ("rtree", "sub", "deep"): "t2",
    }
    locations = [
        simple_table(rest, namespace, name, appends=1).location() for namespace, name in tables.items()
    ]
    purge_id = await purges.namespaces.start(
        namespace_request(REST_CATALOG, ["rtree"], requested_by="pytest", recursive=True)
    )
    status = (await purges.namespaces.wait(purge_id)).status
    assert status.state is NamespacePurgeState.SUCCEEDED
    assert (status.tables_total, status.tables_done, status.namespaces_dropped) == (3, 3, 3)
    # In one batch (small tables, the default): a record each, no workflow.
    records = all_batch_records(s3, worker_settings.state_location, purge_id)
    assert {(tuple(record.status.namespace), record.status.table) for record in records} == {
        (namespace, name) for namespace, name in tables.items()
    }
    assert (await purges.list(PurgeFilter(parent=purge_id))).items == []
    assert ("rtree",) not in rest.list_namespaces()
    assert all(s3.list(location) == set() for location in locations)


def test_a_guards_kept_index_follows_a_catalog_whose_listing_names_no_metadata_file(
    rest: RestCatalog,
) -> None:
    """The REST listing says names only: each guard takes every table's locations from the
    short-lived cache or a load, and the index follows them (a table that leaves is forgotten)."""
    namespace = ("guard", "rest")
    live = simple_table(rest, namespace, "live", appends=1)
    simple_table(rest, namespace, "other", appends=1)
    # The snapshot of a table gone from the catalog whose metadata `live` still uses.
    purged = PurgedTable(
        catalog=REST_CATALOG,
        identifier=(*namespace, "dropped"),
        metadata_location=live.metadata_location,
        locations=tuple(table_locations(live.metadata.location, live.metadata.properties)),
    )
    scanner = LiveTableScanner(FootprintCache(ttl_seconds=60), concurrency=2)

    first = scanner.scan(rest, purged, OverlapScope.NAMESPACE, lambda: None)
    again = scanner.scan(rest, purged, OverlapScope.NAMESPACE, lambda: None)
    rest.drop_table((*namespace, "live"))
    cached_but_gone = scanner.scan(rest, purged, OverlapScope.NAMESPACE, lambda: None)

    for refused in (first, again):
        assert refused.refusal is not None and "guard.rest.live" in refused.refusal
        assert refused.tables_compared == 2
    # The second guard loaded nothing: both tables' locations came from the cache.
    assert first.catalog_calls == 4 and again.catalog_calls == 2
    assert cached_but_gone.refusal is None and cached_but_gone.tables_compared == 1
