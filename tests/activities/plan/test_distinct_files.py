"""A rewrite-heavy table lists one file in many manifests: each distinct file is planned,
counted and sent to the store exactly once (the Spark engine's run is in test_spark_engine)."""

from __future__ import annotations

from pyiceberg.catalog.sql import SqlCatalog

from icepurge.api.clients.temporal_client import PurgeClient
from icepurge.devstack.stack import EmbeddedStack
from tests.distinct_check import purge_rewrite_heavy_table
from tests.store import S3Store


async def test_each_distinct_file_is_counted_once_and_sent_once(
    catalog: SqlCatalog, purges: PurgeClient, s3: S3Store, stack: EmbeddedStack
) -> None:
    status = await purge_rewrite_heavy_table(purges, catalog, s3, stack, "local")
    assert status.engine == "local"
