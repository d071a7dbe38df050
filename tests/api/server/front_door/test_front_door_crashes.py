"""The front door and the worker killed (SIGKILL, real processes) during drops with purge against
a real upstream (SeaweedFS's REST catalog): the front door after the purge is recorded and before
the drop; the front door after the drop, before its answer; the worker mid-way; both inside the
window where the upstream dropped the table and its answer had not reached the dropper (a proxy
holds it back), plan first, held and in pass-through mode. Each time the client's retry answers
204 with the same purge (503 meanwhile, never 404), the purge completes once, the table is
dropped and its files are gone, and a neighbour table is untouched."""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import quote

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
from icepurge.devstack.free_ports import free_ports
from icepurge.devstack.process import WORKER_READY, ServiceProcess
from icepurge.devstack.s3_proxy import FaultPlan
from icepurge.devstack.stack import EmbeddedStack
from icepurge.worker.settings import WorkerSettings
from tests.api_server import TOKENS
from tests.conftest import (
    HOLD_NAMESPACE,
    REST_CATALOG,
    SLOW_ANSWERS_CATALOG,
    SLOW_HOLDING_CATALOG,
    SLOW_PASS_THROUGH_CATALOG,
)
from tests.drop_windows import HELD_DROPS, pass_through_caller
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

    def start(self, queue: str = QUEUE) -> tuple[ServiceProcess, str]:
        port = free_ports(1)[0]
        api = self._stack.api_process(
            ICEPURGE_API_PORT=str(port),
            ICEPURGE_API_AUTH_FILE=str(self._settings.api_auth_file),
            ICEPURGE_TASK_QUEUE=queue,
            ICEPURGE_FRONT_DOOR=json.dumps(
                {
                    REST_CATALOG: {},
                    SLOW_ANSWERS_CATALOG: {},
                    SLOW_HOLDING_CATALOG: {"hold_namespace": HOLD_NAMESPACE},
                    SLOW_PASS_THROUGH_CATALOG: {"auth": "pass_through"},
                }
            ),
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


def _table_url(door_url: str, name: str, catalog: str = REST_CATALOG) -> str:
    config = httpx.get(f"{door_url}/iceberg/{catalog}/v1/config", headers=_bearer()).json()
    prefix = config.get("overrides", {}).get("prefix") or config.get("defaults", {}).get("prefix")
    base = f"{door_url}/iceberg/{catalog}/v1/" + (f"{quote(prefix, safe='')}/" if prefix else "")
    return f"{base}namespaces/{NAMESPACE}/tables/{name}"


def _bearer() -> dict[str, str]:
    return {"Authorization": f"Bearer {TOKENS['bucket-dropper'][0]}"}


def _delete(door_url: str, name: str, catalog: str = REST_CATALOG) -> httpx.Response | Exception:
    try:
        return httpx.delete(
            _table_url(door_url, name, catalog),
            params={"purgeRequested": "true"},
            headers=_bearer(),
            timeout=90,
        )
    except httpx.HTTPError as error:
        return error


async def _retried_until_dropped(door_url: str, name: str, catalog: str = REST_CATALOG) -> str:
    """The client's retries: every answer is 204 or 503 (retry), and names the same purge."""
    seen: set[str] = set()
    for _ in range(RETRIES):
        answer = await asyncio.to_thread(_delete, door_url, name, catalog)
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


# Longer than a kill and a restart: the dead dropper never hears the answer.
HELD_SECONDS = 60.0


@HELD_DROPS
async def test_a_retry_after_kills_inside_the_drop_window_is_never_told_no_such_table(
    catalog: str,
    held_call: tuple[str, str],
    doors: FrontDoors,
    upstream: RestCatalog,
    upstream_answers: FaultPlan,
    temporal_client: Client,
    s3: S3Store,
) -> None:
    """The upstream dropped (or, held, renamed) the table; before its answer reached the worker,
    the worker and the front door are killed. The client's retries, to a new front door with a new
    worker, are 503 until the purge records the drop, then 204 with the same purge."""
    name = f"window{uuid.uuid4().hex[:6]}"
    table = simple_table(upstream, (NAMESPACE,), name, appends=2)
    purge_id = TableId(catalog, [NAMESPACE], name).purge_id()
    method, path_part = held_call
    upstream_answers.hold_answers(method, path_part, HELD_SECONDS)
    try:
        api, url = doors.start()
        worker = doors.worker("window-worker")
        pending = asyncio.create_task(asyncio.to_thread(_delete, url, name, catalog))
        await upstream_answers.answer_held(path_part)
        assert not upstream.table_exists((NAMESPACE, name))
        killed_at, killed_on = time.monotonic(), datetime.now(UTC)
        worker.kill()
        api.kill()
    finally:
        upstream_answers.release_answers()
    assert isinstance(await pending, Exception)
    _, url = doors.start()
    doors.worker("window-survivor")

    assert await _retried_until_dropped(url, name, catalog) == purge_id
    answered = time.monotonic() - killed_at
    purges = PurgeClient(temporal_client, QUEUE)
    status = (await asyncio.wait_for(purges.wait(purge_id), timeout=180)).status
    assert status.dropped_at is not None
    recorded = (status.dropped_at - killed_on).total_seconds()
    print(f"\n{catalog}: drop recorded {recorded:.1f} s after the kills, 204 after {answered:.1f} s")
    assert status.state is PurgeState.SUCCEEDED, status
    assert await _runs(temporal_client, purge_id) == 1
    assert s3.list(table.location()) == set()


async def test_a_pass_through_retry_after_the_front_door_died_inside_the_drop_window_confirms_its_purge(
    doors: FrontDoors,
    api_url: str,
    stack: EmbeddedStack,
    upstream: RestCatalog,
    pass_through_answers: FaultPlan,
    purges: PurgeClient,
    worker_settings: WorkerSettings,
    temporal_client: Client,
    s3: S3Store,
) -> None:
    """Pass-through: the front door drops with the caller's credentials, and dies before the
    upstream's answer reaches it. The purge it started awaits the drop; the client's retry finds
    the table gone and confirms that purge. (The session's worker runs it: a worker process would
    know the pass-through catalog from the environment and have no token for it.)"""
    name = f"passing{uuid.uuid4().hex[:6]}"
    table = simple_table(pass_through_caller(api_url, stack), (NAMESPACE,), name, appends=2)
    pass_through_answers.hold_answers("DELETE", f"/tables/{name}", HELD_SECONDS)
    try:
        api, url = doors.start(worker_settings.task_queue)
        pending = asyncio.create_task(asyncio.to_thread(_delete, url, name, SLOW_PASS_THROUGH_CATALOG))
        await pass_through_answers.answer_held(f"/tables/{name}")
        api.kill()
    finally:
        pass_through_answers.release_answers()
    assert isinstance(await pending, Exception)
    _, url = doors.start(worker_settings.task_queue)

    purge_id = await _retried_until_dropped(url, name, SLOW_PASS_THROUGH_CATALOG)
    status = (await asyncio.wait_for(purges.wait(purge_id), timeout=180)).status
    assert status.state is PurgeState.SUCCEEDED, status
    assert await _runs(temporal_client, purge_id) == 1
    assert not upstream.table_exists((NAMESPACE, name))
    assert s3.list(table.location()) == set()
