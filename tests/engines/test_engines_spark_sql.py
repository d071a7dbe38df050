"""Spark SQL as a client of the front door: Spark with Iceberg's own Spark runtime (`make engines`),
a REST catalog whose `uri` is the front door, Apache Iceberg's REST server upstream (it keeps a
table's files on a plain drop). Spark's S3 traffic goes through a proxy that counts its deletes."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

import pytest

from icepurge.api.clients.temporal_client import PurgeClient
from icepurge.contract.states import PurgeState
from icepurge.devstack.s3_proxy import FaultPlan, s3_proxy, through_proxy
from icepurge.devstack.stack import EmbeddedStack
from tests.engines_front_door import ADMIN_TOKEN, KEEPS, UNSAID, ReferenceFrontDoor, purge_of, purges_of
from tests.purge_helpers import assert_counts_add_up
from tests.spark_sql import (
    BEFORE_PURGE_REQUESTED,
    NEWEST,
    SparkRuntime,
    SparkSql,
    SparkSqlError,
    rest_catalog_conf,
    spark_sql,
)
from tests.store import S3Store

# A drop through the front door waits for the purge, whose worker runs on the tests' event loop:
# Spark's statements that drop run off it (asyncio.to_thread).
pytestmark = pytest.mark.engines
NAMESPACE = "spark"
# Spark's catalogs: the front door's KEEPS and UNSAID catalogs, and the reference server itself.
DOOR, UNSAID_DOOR, DIRECT = "door", "unsaid", "direct"


@contextmanager
def _session(
    runtime: SparkRuntime, reference: ReferenceFrontDoor, store_port: int, log: Path, **door: str
) -> Iterator[SparkSql]:
    s3 = through_proxy(reference.s3_properties, store_port)
    conf = {
        **rest_catalog_conf(DOOR, reference.door_uri(KEEPS), s3, token=ADMIN_TOKEN, **door),
        **rest_catalog_conf(UNSAID_DOOR, reference.door_uri(UNSAID), s3, token=ADMIN_TOKEN, **door),
        **rest_catalog_conf(DIRECT, reference.upstream_uri, s3),
    }
    with spark_sql(runtime, conf, log) as session:
        session.sql(f"CREATE NAMESPACE IF NOT EXISTS {DIRECT}.{NAMESPACE}")
        yield session


@pytest.fixture(scope="module")
def spark_store(stack: EmbeddedStack) -> Iterator[tuple[int, FaultPlan]]:
    """The proxy between every Spark session and the store: what Spark itself deletes."""
    with s3_proxy(stack.ports.s3) as proxied:
        yield proxied


@pytest.fixture(scope="module")
def sessions(
    reference: ReferenceFrontDoor,
    spark_store: tuple[int, FaultPlan],
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[dict[SparkRuntime, SparkSql]]:
    """A Spark session per runtime: Iceberg's newest, told to leave a purge to the REST catalog
    (rest-catalog-purge), and 1.10, whose `DROP TABLE … PURGE` sends a DELETE that doesn't say
    purgeRequested, then deletes the files itself if the metadata file is still there."""
    logs = tmp_path_factory.mktemp("spark")
    with ExitStack() as started:
        yield {
            runtime: started.enter_context(
                _session(runtime, reference, spark_store[0], logs / f"{runtime.name}.log", **door)
            )
            for runtime, door in ((NEWEST, {"rest-catalog-purge": "true"}), (BEFORE_PURGE_REQUESTED, {}))
        }


@pytest.fixture
def newest(sessions: dict[SparkRuntime, SparkSql]) -> SparkSql:
    return sessions[NEWEST]


@pytest.fixture
def before(sessions: dict[SparkRuntime, SparkSql]) -> SparkSql:
    return sessions[BEFORE_PURGE_REQUESTED]


@pytest.fixture
def purges(reference: ReferenceFrontDoor) -> PurgeClient:
    return reference.purges


def _deletes(faults: FaultPlan) -> int:
    """Delete requests Spark sent: single DELETEs and bulk DeleteObjects."""
    with faults.lock:
        return faults.requests["DELETE"] + faults.delete_requests


def _small_table(spark: SparkSql, catalog: str, name: str) -> str:
    table = f"{catalog}.{NAMESPACE}.{name}"
    spark.sql(f"CREATE TABLE {table} (id BIGINT, category STRING) USING iceberg PARTITIONED BY (category)")
    for batch in range(3):
        spark.sql(f"INSERT INTO {table} VALUES ({batch * 2}, 'c{batch}'), ({batch * 2 + 1}, 'c{batch}')")
    return table


def _location(reference: ReferenceFrontDoor, name: str) -> str:
    """Asked of the upstream: Spark 1.10 can't read a metadata table through this one (it first
    asks for a table in namespace `spark.<name>`, encoded %1F, which Jetty 12 refuses with 400
    "Suspicious Path Character" where 1.10 expects 404)."""
    location: str = reference.upstream().load_table((NAMESPACE, name)).location()
    return location


async def test_drop_table_purge_with_rest_catalog_purge_is_an_icepurge_purge_and_spark_deletes_nothing(
    newest: SparkSql,
    spark_store: tuple[int, FaultPlan],
    reference: ReferenceFrontDoor,
    purges: PurgeClient,
    s3: S3Store,
) -> None:
    name = f"n{uuid.uuid4().hex[:8]}"
    table = _small_table(newest, DOOR, name)
    location = _location(reference, name)
    owned = s3.list(location)
    sent_before = _deletes(spark_store[1])
    await asyncio.to_thread(newest.sql, f"DROP TABLE {table} PURGE")
    purge_id = await purge_of(purges, KEEPS, NAMESPACE, name)
    status = (await purges.wait(purge_id)).status
    assert status.state is PurgeState.SUCCEEDED, status
    assert_counts_add_up(status)
    assert status.counts.total().deleted == status.planned.files == len(owned)
    assert s3.list(location) == set()
    assert _deletes(spark_store[1]) == sent_before, "Spark deleted files itself"


async def test_before_1_11_a_plain_drop_stays_plain_and_a_purge_stays_sparks_own(
    before: SparkSql,
    spark_store: tuple[int, FaultPlan],
    reference: ReferenceFrontDoor,
    purges: PurgeClient,
    s3: S3Store,
) -> None:
    """Without purge_unspecified_drops, Spark 1.10's DELETE is a plain drop: `DROP TABLE` keeps
    the files, and `DROP TABLE … PURGE` is Spark deleting them itself, inline; icepurge starts
    nothing either way."""
    kept, purged = f"k{uuid.uuid4().hex[:8]}", f"s{uuid.uuid4().hex[:8]}"
    kept_table, purged_table = _small_table(before, DOOR, kept), _small_table(before, DOOR, purged)
    kept_location, purged_location = _location(reference, kept), _location(reference, purged)
    kept_files = s3.list(kept_location)
    await asyncio.to_thread(before.sql, f"DROP TABLE {kept_table}")
    sent_before = _deletes(spark_store[1])
    await asyncio.to_thread(before.sql, f"DROP TABLE {purged_table} PURGE")
    await asyncio.sleep(2)
    assert await purges_of(purges, KEEPS, NAMESPACE, kept) == []
    assert await purges_of(purges, KEEPS, NAMESPACE, purged) == []
    assert s3.list(kept_location) == kept_files
    assert _deletes(spark_store[1]) > sent_before
    assert s3.list(purged_location) == set()


async def test_before_1_11_purge_unspecified_drops_makes_drop_table_purge_an_icepurge_purge(
    before: SparkSql,
    spark_store: tuple[int, FaultPlan],
    reference: ReferenceFrontDoor,
    purges: PurgeClient,
    s3: S3Store,
) -> None:
    """The race docs/front-door.md describes, as it happens: the front door drops the table first and
    answers, then Spark finds the metadata file still there (the upstream keeps storage) and
    deletes the files too, while icepurge purges them. Every file goes, each counted once."""
    name = f"u{uuid.uuid4().hex[:8]}"
    table = _small_table(before, UNSAID_DOOR, name)
    location = _location(reference, name)
    owned = s3.list(location)
    sent_before = _deletes(spark_store[1])
    try:
        await asyncio.to_thread(before.sql, f"DROP TABLE {table} PURGE")
        spark_said = "no error"
    except SparkSqlError as error:
        # Spark's own deletes read the manifests icepurge may already have deleted: the
        # statement fails although the table was dropped and icepurge purges it.
        assert "NoSuchKeyException" in str(error), error
        spark_said = "NoSuchKeyException"
    assert not reference.upstream().table_exists((NAMESPACE, name))
    purge_id = await purge_of(purges, UNSAID, NAMESPACE, name)
    report = await purges.wait(purge_id)
    status = report.status
    assert_counts_add_up(status)
    assert s3.list(location) == set()
    spark_deletes = _deletes(spark_store[1]) - sent_before
    total = status.counts.total()
    print(
        f"Spark 1.10 DROP TABLE ... PURGE on purge_unspecified_drops: icepurge {status.state.value}, "
        f"{total.deleted} deleted, {total.already_missing} already gone (Spark's), {total.failed} failed, "
        f"of {len(owned)} objects; Spark sent {spark_deletes} delete requests and said: {spark_said}"
    )
    assert status.state in (PurgeState.SUCCEEDED, PurgeState.SUCCEEDED_WITH_ERRORS), status
    assert total.failed == 0


SHAPES = [
    # Merge-on-read row changes: position delete files beside the data files they mask.
    "DELETE FROM {t} WHERE id % 7 = 0",
    "UPDATE {t} SET amount = amount + 1 WHERE id % 5 = 0",
    "MERGE INTO {t} USING (SELECT id, 'c9' AS category, 0.5 AS amount FROM range(55, 70)) AS s "
    "ON {t}.id = s.id WHEN MATCHED THEN UPDATE SET amount = s.amount WHEN NOT MATCHED THEN INSERT *",
    "CALL {catalog}.system.rewrite_data_files(table => '{name}', options => map('min-input-files', '2'))",
    "CALL {catalog}.system.rewrite_manifests('{name}')",
    # Partition evolution: a second spec, then files written under it.
    "ALTER TABLE {t} ADD PARTITION FIELD bucket(4, id)",
    "INSERT INTO {t} SELECT id, 'c1', id * 1.0 FROM range(100, 140)",
    "DELETE FROM {t} WHERE id = 101",
    # Without older_than, Iceberg's default (5 days ago) expires nothing here.
    "CALL {catalog}.system.expire_snapshots(table => '{name}', "
    "older_than => TIMESTAMP '2100-01-01 00:00:00', retain_last => 4)",
    "CALL {catalog}.system.compute_table_stats(table => '{name}')",
]


def _oracle(spark: SparkSql, table: str) -> set[str]:
    """Every file Spark's own metadata tables say the table owns."""
    queries = {
        "all_files": "file_path",
        "all_manifests": "path",
        "snapshots": "manifest_list",
        "metadata_log_entries": "file",
    }
    owned: set[str] = set()
    for metadata_table, column in queries.items():
        owned |= {str(row[column]) for row in spark.sql(f"SELECT {column} FROM {table}.{metadata_table}")}
    return owned


@pytest.mark.parametrize("format_version", [2, 3])
async def test_tables_spark_writes_are_purged_exactly(
    newest: SparkSql, reference: ReferenceFrontDoor, purges: PurgeClient, s3: S3Store, format_version: int
) -> None:
    """Shapes PyIceberg doesn't write: merge-on-read DELETE/UPDATE/MERGE (position deletes; in v3,
    deletion vectors in Puffin files), rewritten data files and manifests, partition evolution,
    expired snapshots (their files deleted by the expiry), Puffin statistics. Every object under
    the table's prefix is owned (expiry took the rest), Spark's metadata tables name a subset of
    them, and the purge deletes all of them, each counted once."""
    name = f"w{format_version}{uuid.uuid4().hex[:6]}"
    table = f"{DOOR}.{NAMESPACE}.{name}"
    newest.sql(
        f"CREATE TABLE {table} (id BIGINT, category STRING, amount DOUBLE) USING iceberg "
        f"PARTITIONED BY (category) TBLPROPERTIES ('format-version' = '{format_version}', "
        "'write.delete.mode' = 'merge-on-read', 'write.update.mode' = 'merge-on-read', "
        "'write.merge.mode' = 'merge-on-read')"
    )
    for batch in range(3):
        newest.sql(
            f"INSERT INTO {table} SELECT id, 'c{batch}', id * 1.0 FROM range({batch * 20}, {batch * 20 + 20})"
        )
    for statement in SHAPES:
        newest.sql(statement.format(t=table, catalog=DOOR, name=f"{NAMESPACE}.{name}"))
    oracle = _oracle(newest, table)
    location = _location(reference, name)
    owned = s3.list(location)
    assert oracle <= owned, sorted(oracle - owned)[:5]
    await asyncio.to_thread(newest.sql, f"DROP TABLE {table} PURGE")
    status = (await purges.wait(await purge_of(purges, KEEPS, NAMESPACE, name))).status
    assert status.state is PurgeState.SUCCEEDED, status
    assert_counts_add_up(status)
    # Older metadata files still name the manifest lists the expiry deleted, and kept manifests
    # the files it deleted: each counts as already gone, and every object there was as deleted.
    total = status.counts.total()
    assert status.unreadable_files > 0
    gone = status.planned.files - len(owned)
    assert (total.deleted, total.already_missing) == (len(owned), gone), status.counts.model_dump_json()
    assert status.planned.statistics_files >= 1
    assert s3.list(location) == set()
    print(
        f"v{format_version}: {len(owned)} objects ({status.planned}), "
        f"Spark's metadata tables name {len(oracle)}"
    )
