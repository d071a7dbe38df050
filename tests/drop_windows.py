"""What the tests of the drop window share: the calls a proxy holds back (plan first: the
upstream's DELETE; held: its rename), a pass-through caller, and the end every drop must reach."""

from __future__ import annotations

import pytest
from pyiceberg.catalog.rest import RestCatalog
from pyiceberg.table import Table

from icepurge.api.clients.temporal_client import PurgeClient
from icepurge.contract.states import PurgeState
from icepurge.devstack.stack import EmbeddedStack
from tests.api_server import TOKENS
from tests.conftest import PASS_THROUGH_CATALOG, REST_TABLE_BUCKET, SLOW_ANSWERS_CATALOG, SLOW_HOLDING_CATALOG
from tests.store import S3Store

# (catalog, (method, path part of the call whose answer is held back)).
HELD_DROPS = pytest.mark.parametrize(
    ("catalog", "held_call"),
    [(SLOW_ANSWERS_CATALOG, ("DELETE", "/tables/")), (SLOW_HOLDING_CATALOG, ("POST", "/tables/rename"))],
    ids=["plan-first", "held"],
)


def pass_through_caller(api_url: str, stack: EmbeddedStack) -> RestCatalog:
    """A client of the pass-through front door, with its own token (the upstream checks it)."""
    return RestCatalog(
        "window-caller",
        uri=f"{api_url}/iceberg/{PASS_THROUGH_CATALOG}",
        token=TOKENS["bucket-dropper"][0],
        warehouse=f"s3://{REST_TABLE_BUCKET}/",
        **stack.s3_properties,
    )


async def purged_once(
    purges: PurgeClient, purge_id: str, upstream: RestCatalog, table: Table, s3: S3Store
) -> None:
    """The purge SUCCEEDED, the table left its catalog and every file under it is gone."""
    status = (await purges.wait(purge_id)).status
    assert status.state is PurgeState.SUCCEEDED, status
    assert not upstream.table_exists(table.name())
    assert s3.list(table.location()) == set()
