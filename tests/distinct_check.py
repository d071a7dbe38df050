"""The distinct-files check both engines must pass: a rewrite-heavy table purged through a
counting proxy, compared with an independently computed distinct set."""

from __future__ import annotations

from collections import Counter
from typing import Any

from pyiceberg.catalog.sql import SqlCatalog

from icepurge.api.clients.temporal_client import PurgeClient
from icepurge.contract.counts import Category
from icepurge.contract.states import PurgeState
from icepurge.contract.status import PurgeStatus
from icepurge.devstack.rewrite_heavy_table import rewrite_heavy_table
from icepurge.devstack.s3_proxy import s3_proxy, through_proxy
from icepurge.devstack.stack import EmbeddedStack
from tests.expected import content_listings, drop_table_data_set, history_set
from tests.purge_helpers import assert_counts_add_up, purge, request_for
from tests.store import S3Store, key_of
from tests.tables import REWRITE_SHAPE


async def purge_rewrite_heavy_table(
    client: PurgeClient, catalog: SqlCatalog, s3: S3Store, stack: EmbeddedStack, name: str, **options: Any
) -> PurgeStatus:
    table = rewrite_heavy_table(catalog, ("distinct",), name, REWRITE_SHAPE)
    listings = content_listings(table.io, table.metadata_location)
    distinct = dict(listings)
    assert len(listings) > 2 * len(distinct), "the table should list its files many times"
    owned = drop_table_data_set(table.io, table.metadata_location) | history_set(
        table.io, table.metadata_location
    )
    before = s3.list(table.location())

    with s3_proxy(stack.ports.s3) as (port, faults):
        report = await purge(client, request_for(table, through_proxy(s3.properties, port), **options))

    status = report.status
    assert status.state is PurgeState.SUCCEEDED
    # Merge-append leaves manifests that no metadata file ever referenced: not the table's to purge.
    assert s3.list(table.location()) == before - owned
    assert status.planned.content_files == len(distinct)
    data = status.counts.of(Category.DATA_FILES)
    assert data.deleted == len(distinct)
    assert data.bytes_deleted == sum(distinct.values())
    assert_counts_add_up(status)
    sent = Counter(faults.deleted_keys)
    assert set(sent) == {key_of(path) for path in owned}
    assert max(sent.values()) == 1, sent.most_common(3)
    return status
