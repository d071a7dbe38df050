"""Trino as a client of the front door: its Iceberg connector on a REST catalog whose uri is the
front door (Apache Iceberg's REST server upstream). Trino has no PURGE keyword: its DROP TABLE on a
REST catalog is the REST client's purgeTable, a drop with purge, so it becomes an icepurge purge."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterator

import pytest

from icepurge.api.clients.temporal_client import PurgeClient
from icepurge.contract.states import PurgeState
from icepurge.devstack.free_ports import free_ports
from icepurge.devstack.s3_proxy import FaultPlan, s3_proxy
from icepurge.devstack.stack import EmbeddedStack
from icepurge.devstack.trino_server import TrinoServer
from tests.engines_front_door import ADMIN_TOKEN, KEEPS, ReferenceFrontDoor, purge_of
from tests.purge_helpers import assert_counts_add_up
from tests.store import S3Store
from tests.trino_client import run_statement

pytestmark = pytest.mark.engines
SCHEMA = "trino"


@pytest.fixture(scope="module")
def trino(
    stack: EmbeddedStack, reference: ReferenceFrontDoor, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[str, FaultPlan]]:
    """Trino's URL, and the proxy its S3 traffic goes through (what Trino itself deletes)."""
    s3 = reference.s3_properties
    with s3_proxy(stack.ports.s3) as (port, faults):
        door = {
            "connector.name": "iceberg",
            "iceberg.catalog.type": "rest",
            "iceberg.rest-catalog.uri": reference.door_uri(KEEPS),
            "iceberg.rest-catalog.security": "OAUTH2",
            "iceberg.rest-catalog.oauth2.token": ADMIN_TOKEN,
            "fs.native-s3.enabled": "true",
            "s3.endpoint": f"http://127.0.0.1:{port}",
            "s3.region": s3["s3.region"],
            "s3.path-style-access": "true",
            "s3.aws-access-key": s3["s3.access-key-id"],
            "s3.aws-secret-key": s3["s3.secret-access-key"],
        }
        server = TrinoServer(tmp_path_factory.mktemp("trino"), free_ports(1)[0], {"door": door})
        server.start()
        try:
            run_statement(server.url, f"CREATE SCHEMA IF NOT EXISTS door.{SCHEMA}")
            yield server.url, faults
        finally:
            server.stop()


@pytest.fixture
def purges(reference: ReferenceFrontDoor) -> PurgeClient:
    return reference.purges


async def test_trinos_drop_table_is_an_icepurge_purge_and_trino_deletes_nothing(
    trino: tuple[str, FaultPlan], reference: ReferenceFrontDoor, purges: PurgeClient, s3: S3Store
) -> None:
    url, faults = trino
    name = f"t{uuid.uuid4().hex[:8]}"
    table = f"door.{SCHEMA}.{name}"
    run_statement(
        url, f"CREATE TABLE {table} (id BIGINT, category VARCHAR) WITH (partitioning = ARRAY['category'])"
    )
    for batch in range(3):
        run_statement(
            url, f"INSERT INTO {table} VALUES ({batch * 2}, 'c{batch}'), ({batch * 2 + 1}, 'c{batch}')"
        )
    assert run_statement(url, f"SELECT count(*) FROM {table}") == [[6]]
    location = reference.upstream().load_table((SCHEMA, name)).location()
    owned = s3.list(location)
    with faults.lock:
        sent_before = faults.requests["DELETE"] + faults.delete_requests
    await asyncio.to_thread(run_statement, url, f"DROP TABLE {table}")
    assert not reference.upstream().table_exists((SCHEMA, name))
    status = (await purges.wait(await purge_of(purges, KEEPS, SCHEMA, name))).status
    assert status.state is PurgeState.SUCCEEDED, status
    assert_counts_add_up(status)
    assert status.counts.total().deleted == status.planned.files == len(owned)
    assert s3.list(location) == set()
    with faults.lock:
        assert faults.requests["DELETE"] + faults.delete_requests == sent_before, "Trino deleted files itself"
