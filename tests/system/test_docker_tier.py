"""The docker tier: the same purge against MinIO in a container (testcontainers). Skipped, with
the reason, where no Docker engine answers — as on the project's own CI machines."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from pyiceberg.catalog.sql import SqlCatalog

from icepurge.api.clients.temporal_client import PurgeClient
from icepurge.contract.states import PurgeState
from tests.purge_helpers import purge, request_for
from tests.store import S3Store
from tests.tables import rich_table

pytestmark = pytest.mark.docker

MINIO_USER, MINIO_PASSWORD = "icepurge", "icepurge-minio"


def _docker_engine_answers() -> str | None:
    try:
        import docker

        docker.from_env(timeout=3).ping()
    except Exception as error:  # any failure means: no engine to run containers on
        return f"no Docker engine answers ({type(error).__name__}); the docker tier needs one"
    return None


@pytest.fixture(scope="module")
def minio_properties() -> Iterator[dict[str, str]]:
    reason = _docker_engine_answers()
    if reason:
        pytest.skip(reason)
    from testcontainers.core.container import DockerContainer

    container = (
        DockerContainer("minio/minio:latest")
        .with_env("MINIO_ROOT_USER", MINIO_USER)
        .with_env("MINIO_ROOT_PASSWORD", MINIO_PASSWORD)
        .with_command("server /data")
        .with_exposed_ports(9000)
    )
    with container:
        properties = {
            "s3.endpoint": f"http://{container.get_container_host_ip()}:{container.get_exposed_port(9000)}",
            "s3.access-key-id": MINIO_USER,
            "s3.secret-access-key": MINIO_PASSWORD,
            "s3.region": "us-east-1",
        }
        store = S3Store(properties)
        deadline = time.monotonic() + 60
        while True:
            try:
                store.client.create_bucket(Bucket="warehouse")
                break
            except Exception:
                if time.monotonic() > deadline:
                    raise
                time.sleep(1)
        yield properties


async def test_purge_on_minio_leaves_the_table_prefix_empty(
    minio_properties: dict[str, str], purges: PurgeClient, tmp_path: Path
) -> None:
    catalog = SqlCatalog(
        "minio",
        uri=f"sqlite:///{tmp_path / 'c.sqlite'}",
        warehouse="s3://warehouse/minio",
        **minio_properties,
    )
    table = rich_table(catalog, ("docker",), "minio_table")
    store = S3Store(minio_properties)
    report = await purge(purges, request_for(table, minio_properties))
    assert report.status.state is PurgeState.SUCCEEDED
    assert store.list(table.location()) == set()
