"""The front door's load tier, short (the full size is bench.front_door_load): Locust users, each
a PyIceberg REST client, create and append to tables through the front door at once, one also a
synthetic table of many files, then drop every table with purge: every drop answered 204, every
purge completed, every dropped table's prefix empty when listed directly."""

from __future__ import annotations

from pathlib import Path

from bench.front_door_load import LoadRun, completed, run_locust
from icepurge.api.clients.temporal_client import PurgeClient
from icepurge.devstack.stack import EmbeddedStack
from tests.api_server import TOKENS
from tests.conftest import REST_CATALOG, REST_TABLE_BUCKET
from tests.store import S3Store

USERS, TABLES_PER_USER, LARGE_FILES = 4, 2, 1_000


async def test_many_clients_drop_tables_with_purge_through_the_front_door_at_once(
    api_url: str, purges: PurgeClient, stack: EmbeddedStack, s3: S3Store, tmp_path: Path
) -> None:
    run = LoadRun(
        door_url=f"{api_url}/iceberg/{REST_CATALOG}",
        token=TOKENS["bucket-dropper"][0],
        warehouse=f"s3://{REST_TABLE_BUCKET}/",
        s3=stack.s3_properties,
        namespace="load",
        users=USERS,
        tables_per_user=TABLES_PER_USER,
        large_files=LARGE_FILES,
    )
    outcome = await run_locust(run, tmp_path)
    drops = {drop.label: drop for drop in outcome.drops}
    assert len(drops["small table (3 appends)"].seconds) == USERS * TABLES_PER_USER
    assert len(drops[f"{LARGE_FILES:,}-file table"].seconds) == 1
    assert [drop.failures for drop in outcome.drops] == [0, 0]
    assert await completed(purges, outcome.tables) == len(outcome.tables) == USERS * TABLES_PER_USER + 1
    assert [location for location in outcome.locations if s3.list(location)] == []
