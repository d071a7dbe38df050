"""Flink-written tables (PyFlink 2.1 with Iceberg 1.11's Flink runtime, `make engines`): an upsert
table (equality deletes for keys written again in a later commit, a position delete for a key
written twice in one) purged exactly when Flink SQL's DROP TABLE reaches the front door, and by
name. Apache Iceberg's REST server upstream (it keeps a table's files on a drop)."""

from __future__ import annotations

import asyncio
import uuid
from collections import Counter
from collections.abc import Iterator

import pytest

from icepurge.api.clients.temporal_client import PurgeClient
from icepurge.contract.counts import Category
from icepurge.contract.states import PurgeState
from icepurge.contract.status import PurgeStatus
from tests.engines_front_door import ADMIN_TOKEN, KEEPS, ReferenceFrontDoor, purge_of
from tests.flink_sql import create_rest_catalog, flink_sql
from tests.purge_helpers import assert_counts_add_up
from tests.sql_sessions import SqlSession
from tests.store import S3Store

# A drop through the front door waits for the purge, whose worker runs on the tests' event loop:
# Flink's statements that drop run off it (asyncio.to_thread).
pytestmark = pytest.mark.engines
NAMESPACE = "flink"
# Flink's catalogs: the front door's KEEPS catalog, and the reference server itself.
DOOR, DIRECT = "door", "direct"
# Iceberg's content codes: what a table's files are.
DATA, POSITION_DELETES, EQUALITY_DELETES = 0, 1, 2


@pytest.fixture(scope="module")
def flink(reference: ReferenceFrontDoor, tmp_path_factory: pytest.TempPathFactory) -> Iterator[SqlSession]:
    with flink_sql(tmp_path_factory.mktemp("flink") / "flink.log") as session:
        s3 = reference.s3_properties
        session.sql(create_rest_catalog(DOOR, reference.door_uri(KEEPS), s3, ADMIN_TOKEN))
        session.sql(create_rest_catalog(DIRECT, reference.upstream_uri, s3))
        session.sql(f"CREATE DATABASE IF NOT EXISTS {DIRECT}.{NAMESPACE}")
        yield session


@pytest.fixture
def purges(reference: ReferenceFrontDoor) -> PurgeClient:
    return reference.purges


def _upsert_table(flink: SqlSession, catalog: str, name: str) -> str:
    table = f"{catalog}.{NAMESPACE}.{name}"
    flink.sql(
        f"CREATE TABLE {table} (id BIGINT, v STRING, PRIMARY KEY (id) NOT ENFORCED) "
        "WITH ('format-version' = '2', 'write.upsert.enabled' = 'true')"
    )
    flink.sql(f"INSERT INTO {table} VALUES (1, 'a'), (2, 'b'), (3, 'c')")
    flink.sql(f"INSERT INTO {table} VALUES (1, 'a2'), (4, 'd'), (4, 'd2')")
    flink.sql(f"INSERT INTO {table} VALUES (2, 'b2'), (3, 'c2')")
    rows = {row["id"]: row["v"] for row in flink.sql(f"SELECT id, v FROM {table}")}
    assert rows == {"1": "a2", "2": "b2", "3": "c2", "4": "d2"}
    return table


def _contents(reference: ReferenceFrontDoor, name: str) -> Counter[int]:
    files = reference.upstream().load_table((NAMESPACE, name)).inspect.files().to_pylist()
    return Counter(int(row["content"]) for row in files)


def _assert_exact(status: PurgeStatus, owned: int, contents: Counter[int]) -> None:
    assert status.state is PurgeState.SUCCEEDED, status
    assert_counts_add_up(status)
    assert status.counts.total().deleted == status.planned.files == owned
    assert status.counts.of(Category.DATA_FILES).deleted >= contents[DATA]
    assert status.counts.of(Category.EQUALITY_DELETE_FILES).deleted >= contents[EQUALITY_DELETES]
    assert status.counts.of(Category.POSITION_DELETE_FILES).deleted >= contents[POSITION_DELETES]


async def test_flink_drop_table_reaches_the_front_door_as_a_purge_and_is_purged_exactly(
    flink: SqlSession, reference: ReferenceFrontDoor, purges: PurgeClient, s3: S3Store
) -> None:
    """Iceberg's FlinkCatalog drops with Catalog.dropTable(identifier), which purges: through a
    REST catalog, a DELETE with purgeRequested=true. The front door purges the table, and Flink
    deletes nothing itself (every file the purge planned, it deleted)."""
    name = f"d{uuid.uuid4().hex[:8]}"
    table = _upsert_table(flink, DOOR, name)
    contents = _contents(reference, name)
    assert contents[EQUALITY_DELETES] and contents[POSITION_DELETES], contents
    location = reference.upstream().load_table((NAMESPACE, name)).location()
    owned = s3.list(location)

    await asyncio.to_thread(flink.sql, f"DROP TABLE {table}")

    purge_id = await purge_of(purges, KEEPS, NAMESPACE, name)
    _assert_exact((await purges.wait(purge_id)).status, len(owned), contents)
    assert s3.list(location) == set()
    assert not reference.upstream().table_exists((NAMESPACE, name))


async def test_a_flink_upsert_table_is_purged_by_name_exactly(
    flink: SqlSession, reference: ReferenceFrontDoor, purges: PurgeClient, s3: S3Store
) -> None:
    name = f"n{uuid.uuid4().hex[:8]}"
    _upsert_table(flink, DIRECT, name)
    contents = _contents(reference, name)
    assert contents[EQUALITY_DELETES] and contents[POSITION_DELETES], contents
    location = reference.upstream().load_table((NAMESPACE, name)).location()
    owned = s3.list(location)

    purge_id = await purges.purge_by_name(KEEPS, [NAMESPACE], name, requested_by="pytest")

    _assert_exact((await purges.wait(purge_id)).status, len(owned), contents)
    assert s3.list(location) == set()
    assert not reference.upstream().table_exists((NAMESPACE, name))
