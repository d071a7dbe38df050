"""The front door and the worker killed (SIGKILL, real processes) during drops with purge against
a real upstream (SeaweedFS's REST catalog): the front door after the purge is recorded and before
the drop; the front door after the drop, before its answer; the worker mid-way. Each time the
client's retry answers 204 with the same purge, the purge completes once, the table is dropped
and its files are gone, and a neighbour table is untouched."""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from pyiceberg.catalog.rest import RestCatalog
from pyiceberg.table import Table
from temporalio.client import Client
from temporalio.service import RPCError

from icepurge.api.clients.temporal_client import PurgeClient
from icepurge.api.server.front_door.drops import TableId
from icepurge.api.server.front_door.routes import PURGE_ID_HEADER
from icepurge.api.server.settings import ApiSettings
from icepurge.contract.states import PurgeState
from icepurge.devstack.process import WORKER_READY, ServiceProcess, free_ports
from icepurge.devstack.stack import EmbeddedStack
from tests.api_server import TOKENS
from tests.conftest import REST_CATALOG
from tests.store import S3Store
from tests.tables import simple_table

NAMESPACE = "door_crashes"
QUEUE = "icepurge-door-crashes"
RETRIES = 8


@pytest.fixture(scope="module")
def upstream(rest_upstream: RestCatalog) -> RestCatalog:
    rest_upstream.create_namespace_if_not_exists((NAMESPACE,))
    return rest_upstream


class FrontDoors:
    """Front doors started as `icepurge api` processes on one task queue, killed at will."""

    def __init__(self, stack: EmbeddedStack, settings: ApiSettings) -> None:
        self._stack, self._settings = stack, settings
        self._started: list[ServiceProcess] = []

    def start(self) -> tuple[ServiceProcess, str]:
        port = free_ports(1)[0]
        api = self._stack.api_process(
            ICEPURGE_API_PORT=str(port),
            ICEPURGE_API_AUTH_FILE=str(self._settings.api_auth_file),
            ICEPURGE_TASK_QUEUE=QUEUE,
            ICEPURGE_FRONT_DOOR=json.dumps({REST_CATALOG: {}}),
        )
        api.start()
        self._started.append(api)
        api.wait_for_port(port)
        return api, f"http://127.0.0.1:{port}"

    def worker(self, name: str) -> ServiceProcess:
        worker = self._stack.worker_process(name, ICEPURGE_TASK_QUEUE=QUEUE)
        worker.start()
        self._started.append(worker)
        worker.wait_for_log(WORKER_READY)
        return worker

    def logs(self) -> str:
        return "".join(Path(process.log_path).read_text(errors="replace") for process in self._started)

    def stop_all(self) -> None:
        for process in self._started:
            process.kill()


@pytest.fixture
def doors(stack: EmbeddedStack, api_settings: ApiSettings) -> Iterator[FrontDoors]:
    started = FrontDoors(stack, api_settings)
    try:
        yield started
    finally:
        started.stop_all()


def _table_url(door_url: str, name: str) -> str:
    config = httpx.get(f"{door_url}/iceberg/{REST_CATALOG}/v1/config", headers=_bearer()).json()
    prefix = config.get("overrides", {}).get("prefix") or config.get("defaults", {}).get("prefix")
    base = f"{door_url}/iceberg/{REST_CATALOG}/v1/" + (f"{prefix}/" if prefix else "")
    return f"{base}namespaces/{NAMESPACE}/tables/{name}"


def _bearer() -> dict[str, str]:
    return {"Authorization": f"Bearer {TOKENS['bucket-dropper'][0]}"}


def _delete(door_url: str, name: str) -> httpx.Response | Exception:
    try:
        return httpx.delete(
            _table_url(door_url, name), params={"purgeRequested": "true"}, headers=_bearer(), timeout=90
        )
    except httpx.HTTPError as error:
        return error


async def _retried_until_dropped(door_url: str, name: str) -> str:
    """The client's retries: every answer is 204 or 503 (retry), and names the same purge."""
    seen: set[str] = set()
    for _ in range(RETRIES):
        answer = await asyncio.to_thread(_delete, door_url, name)
        assert isinstance(answer, httpx.Response), answer
        assert answer.status_code in (204, 503), answer.text
        seen.add(answer.headers[PURGE_ID_HEADER])
        if answer.status_code == 204:
            assert len(seen) == 1, seen
            return seen.pop()
    raise AssertionError(f"{name}: not dropped after {RETRIES} tries")


async def _recorded(client: Client, purge_id: str, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while True:
        try:
            await client.get_workflow_handle(purge_id).describe()
            return
        except RPCError:
            if time.monotonic() > deadline:
                raise
            await asyncio.sleep(0.05)


async def _dropped(purges: PurgeClient, purge_id: str, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while (await purges.status(purge_id)).dropped_at is None:
        assert time.monotonic() < deadline, f"{purge_id} never dropped its table"
        await asyncio.sleep(0.02)


async def _runs(client: Client, purge_id: str) -> int:
    return len([run async for run in client.list_workflows(f"WorkflowId = '{purge_id}'")])


async def test_front_door_and_worker_kills_during_drops_lose_nothing_and_purge_once(
    doors: FrontDoors, upstream: RestCatalog, temporal_client: Client, s3: S3Store
) -> None:
    tag = uuid.uuid4().hex[:6]
    names = {step: f"{step}{tag}" for step in ("recorded", "dropped", "worker")}
    tables: dict[str, Table] = {
        step: simple_table(upstream, (NAMESPACE,), name, appends=2) for step, name in names.items()
    }
    neighbour = simple_table(upstream, (NAMESPACE,), f"kept{tag}", appends=1)
    kept = s3.list(neighbour.location())
    purges = PurgeClient(temporal_client, QUEUE)
    ids = {step: TableId(REST_CATALOG, [NAMESPACE], name).purge_id() for step, name in names.items()}

    # 1. Killed once the purge is recorded, before any drop (no worker polls the queue yet).
    first, url = doors.start()
    pending = asyncio.create_task(asyncio.to_thread(_delete, url, names["recorded"]))
    await _recorded(temporal_client, ids["recorded"])
    first.kill()
    assert isinstance(await pending, Exception)
    assert upstream.table_exists((NAMESPACE, names["recorded"]))
    assert s3.list(tables["recorded"].location())

    # 2. Killed after the drop, before its answer: the worker drops while the front door waits.
    second, url = doors.start()
    worker = doors.worker("door-crash-worker")
    pending = asyncio.create_task(asyncio.to_thread(_delete, url, names["dropped"]))
    await _recorded(temporal_client, ids["dropped"])
    await _dropped(purges, ids["dropped"])
    second.kill()
    await pending

    # 3. The worker killed mid-drop; another takes over while the client retries.
    third, url = doors.start()
    pending = asyncio.create_task(asyncio.to_thread(_delete, url, names["worker"]))
    await _recorded(temporal_client, ids["worker"])
    worker.kill()
    doors.worker("door-crash-survivor")
    await pending

    for step, name in names.items():
        assert await _retried_until_dropped(url, name) == ids[step], step
    for step, table in tables.items():
        status = (await asyncio.wait_for(purges.wait(ids[step]), timeout=180)).status
        assert status.state is PurgeState.SUCCEEDED, (step, status)
        assert await _runs(temporal_client, ids[step]) == 1, step
        assert not upstream.table_exists((NAMESPACE, names[step])), step
        assert s3.list(table.location()) == set(), step
    assert s3.list(neighbour.location()) == kept
    third.kill()
    assert s3.properties["s3.secret-access-key"] not in doors.logs()
    assert TOKENS["bucket-dropper"][0] not in doors.logs()
