from pyiceberg.catalog.sql import SqlCatalog

from icepurge.api.clients.temporal_client import PurgeClient
from icepurge.contract.status import PurgeState
from tests.purge_helpers import purge, request_for
from tests.store import S3Store
from tests.tables import simple_table


async def test_simple_purge_deletes_everything(catalog: SqlCatalog, purges: PurgeClient, s3: S3Store) -> None:
    table = simple_table(catalog, ("smoke",), "t1")
    before = s3.list(table.location())
    assert before
    report = await purge(purges, request_for(table, s3.properties))
    assert report.status.state is PurgeState.SUCCEEDED
    assert s3.list(table.location()) == set()
