"""A real Iceberg REST catalog: SeaweedFS's, one S3 Tables table bucket, SigV4. Its drop deletes
the table's storage itself (S3 Tables semantics): a purge by name through it plans first, so it
ends SUCCEEDED with every file reported already missing, and nothing else touched."""

from __future__ import annotations

import pytest
from pyiceberg.catalog.rest import RestCatalog

from api.client import PurgeClient
from devstack.stack import EmbeddedStack
from tests.conftest import REST_CATALOG, REST_TABLE_BUCKET
from tests.purge_helpers import assert_counts_add_up
from tests.store import S3Store
from tests.tables import simple_table
from workflows.status import GuardName, PurgeState


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
