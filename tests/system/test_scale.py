"""A plan of thousands of manifests: no payload near Temporal's limits, several runs through
continue-as-new, exact counts at the end."""

from __future__ import annotations

from pyiceberg.catalog.sql import SqlCatalog
from temporalio.client import Client

from icepurge.api.clients.temporal_client import PurgeClient
from icepurge.contract.counts import Category
from icepurge.contract.states import PurgeState
from icepurge.devstack.synthetic_table import TableShape, synthetic_table
from tests.purge_helpers import request_for
from tests.store import S3Store

MANIFESTS = 2_000
PAYLOAD_LIMIT = 256 * 1024


async def test_thousands_of_manifests_cross_continue_as_new_with_small_payloads(
    catalog: SqlCatalog, purges: PurgeClient, temporal_client: Client, s3: S3Store
) -> None:
    table = synthetic_table(catalog, ("scale", "wide"), TableShape(manifests=MANIFESTS, files_per_manifest=1))
    purge_id = await purges.start(request_for(table, s3.properties, express_lane=False))
    report = await purges.wait(purge_id)

    status = report.status
    assert status.state is PurgeState.SUCCEEDED
    assert status.run_count >= 3
    assert status.chunks_done == status.chunks_total >= 40
    assert status.counts.of(Category.DATA_FILES).deleted == MANIFESTS
    assert status.counts.of(Category.MANIFESTS).deleted == MANIFESTS
    assert s3.list(table.location()) == set()

    runs = 0
    async for execution in temporal_client.list_workflows(f"WorkflowId='{purge_id}'"):
        runs += 1
        history = await temporal_client.get_workflow_handle(purge_id, run_id=execution.run_id).fetch_history()
        largest = max(event.ByteSize() for event in history.events)
        assert largest < PAYLOAD_LIMIT, f"an event of {largest} bytes in run {execution.run_id}"
    assert runs == status.run_count
