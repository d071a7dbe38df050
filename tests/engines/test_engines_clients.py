"""Other languages' REST clients dropping a table with purge through the front door: iceberg-go's
(catalog/rest PurgeTable) and iceberg-rust's (iceberg-catalog-rest purge_table), each a small
program `make engines` builds (tools/engines). The upstream is Apache Iceberg's REST server; the
table is written by PyIceberg through the front door."""

from __future__ import annotations

import asyncio
import subprocess
import uuid

import pytest

from icepurge.api.clients.temporal_client import PurgeClient
from icepurge.contract.states import PurgeState
from icepurge.devstack.engines_cache import engine_dir
from tests.engines_front_door import ADMIN_TOKEN, KEEPS, ReferenceFrontDoor, purge_of
from tests.purge_helpers import assert_counts_add_up
from tests.store import S3Store
from tests.tables import simple_table

pytestmark = pytest.mark.engines
NAMESPACE = "clients"


@pytest.fixture
def purges(reference: ReferenceFrontDoor) -> PurgeClient:
    return reference.purges


@pytest.mark.parametrize("client", ["iceberg-go-client", "iceberg-rust-client"])
async def test_a_purge_table_from_another_languages_client_is_an_icepurge_purge(
    reference: ReferenceFrontDoor, purges: PurgeClient, s3: S3Store, client: str
) -> None:
    name = f"c{uuid.uuid4().hex[:8]}"
    table = simple_table(reference.door(KEEPS), (NAMESPACE,), name, appends=3)
    files = s3.list(table.location())
    program = engine_dir(client) / client
    done = await asyncio.to_thread(
        subprocess.run,
        [str(program), reference.door_uri(KEEPS), ADMIN_TOKEN, NAMESPACE, name],
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert not reference.upstream().table_exists((NAMESPACE, name))
    status = (await purges.wait(await purge_of(purges, KEEPS, NAMESPACE, name))).status
    assert status.state is PurgeState.SUCCEEDED, status
    assert_counts_add_up(status)
    assert status.counts.total().deleted == len(files)
    assert s3.list(table.location()) == set()
