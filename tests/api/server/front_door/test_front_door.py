"""The Iceberg REST front door against a real upstream (SeaweedFS's REST catalog, SigV4, service
mode): PyIceberg's RestCatalog pointed at it works as against the upstream, and a drop with purge
becomes a durable icepurge purge — answered 204 once the table is dropped, with the purge's id."""

from __future__ import annotations

import asyncio
import json
import shutil
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx
import pytest
from pyiceberg.catalog.rest import RestCatalog
from pyiceberg.catalog.sql import SqlCatalog
from pyiceberg.exceptions import ForbiddenError, NoSuchTableError
from temporalio.client import Client

from icepurge.api.clients.errors import PurgeNotFoundError
from icepurge.api.clients.temporal_client import PurgeClient
from icepurge.api.server.app import create_app
from icepurge.api.server.front_door.drops import TableId, drop_with_purge
from icepurge.api.server.front_door.policy import FrontDoorPolicy
from icepurge.api.server.front_door.routes import PURGE_ID_HEADER, SERVER_TIMING_HEADER, SERVER_TIMING_METRIC
from icepurge.api.server.settings import ApiSettings
from icepurge.contract.events import EventCursor, EventKind, event_from
from icepurge.contract.names import DROP_TABLE_ACTIVITY, LOAD_TABLE_ACTIVITY, PLAN_ACTIVITY
from icepurge.contract.states import PurgeState
from icepurge.devstack.free_ports import free_ports
from icepurge.devstack.stack import EmbeddedStack
from tests.api_server import TOKENS, token_env
from tests.cli_runner import icepurge_over_api
from tests.conftest import (
    HOLD_NAMESPACE,
    LAKE_CATALOG,
    REHEARSAL_CATALOG,
    REST_CATALOG,
    REST_TABLE_BUCKET,
    UNSAID_PURGE_CATALOG,
)
from tests.paths import TESTS
from tests.purge_helpers import activities_in_order, status_when
from tests.store import S3Store
from tests.tables import simple_table

NAMESPACE = "door"


def _door(api_url: str, stack: EmbeddedStack, token: str) -> RestCatalog:
    return RestCatalog(
        "door",
        uri=f"{api_url}/iceberg/{REST_CATALOG}",
        token=token,
        warehouse=f"s3://{REST_TABLE_BUCKET}/",
        **stack.s3_properties,
    )


@pytest.fixture(scope="module")
def upstream(rest_upstream: RestCatalog) -> RestCatalog:
    return rest_upstream


@pytest.fixture(scope="module")
def door(api_url: str, stack: EmbeddedStack, upstream: RestCatalog) -> RestCatalog:
    upstream.create_namespace_if_not_exists((NAMESPACE,))
    return _door(api_url, stack, TOKENS["bucket-dropper"][0])


def _table_path(api_url: str, name: str) -> str:
    config = httpx.get(
        f"{api_url}/iceberg/{REST_CATALOG}/v1/config",
        headers={"Authorization": f"Bearer {TOKENS['bucket-reader'][0]}"},
    ).json()
    prefix = config.get("overrides", {}).get("prefix") or config.get("defaults", {}).get("prefix")
    base = f"{api_url}/iceberg/{REST_CATALOG}/v1/" + (f"{quote(prefix, safe='')}/" if prefix else "")
    return f"{base}namespaces/{NAMESPACE}/tables/{name}"


def _delete(
    api_url: str,
    name: str,
    token: str,
    catalog: str = REST_CATALOG,
    params: dict[str, str] | None = None,
) -> httpx.Response:
    return httpx.delete(
        _table_path(api_url, name).replace(f"/iceberg/{REST_CATALOG}/", f"/iceberg/{catalog}/"),
        params={"purgeRequested": "true"} if params is None else params,
        headers={"Authorization": f"Bearer {token}"},
        timeout=60,
    )


async def _runs(client: Client, purge_id: str) -> int:
    return len([run async for run in client.list_workflows(f"WorkflowId = '{purge_id}'")])


def test_config_keeps_clients_on_the_front_door(api_url: str) -> None:
    answer = httpx.get(
        f"{api_url}/iceberg/{REST_CATALOG}/v1/config",
        headers={"Authorization": f"Bearer {TOKENS['bucket-reader'][0]}"},
    )
    assert answer.status_code == 200, answer.text
    assert answer.json()["overrides"]["uri"] == f"{api_url}/iceberg/{REST_CATALOG}"


def test_a_client_with_only_its_store_credentials_writes_through_the_front_door(
    api_url: str, stack: EmbeddedStack, upstream: RestCatalog
) -> None:
    """The config answer names the store (endpoint, region) as the catalog that knows it would;
    never a credential. A client that brings its keys alone writes a table: without the
    endpoint, PyIceberg went to AWS (`Could not resolve host: <bucket>`)."""
    config = httpx.get(
        f"{api_url}/iceberg/{REST_CATALOG}/v1/config",
        headers={"Authorization": f"Bearer {TOKENS['bucket-reader'][0]}"},
    ).json()
    assert config["defaults"]["s3.endpoint"] == stack.s3_properties["s3.endpoint"]
    assert config["defaults"]["s3.region"] == stack.s3_properties["s3.region"]
    shown = json.dumps(config)
    assert stack.s3_properties["s3.secret-access-key"] not in shown
    assert stack.s3_properties["s3.access-key-id"] not in shown
    keys_only = {key: stack.s3_properties[key] for key in ("s3.access-key-id", "s3.secret-access-key")}
    client = RestCatalog(
        "keys-only",
        uri=f"{api_url}/iceberg/{REST_CATALOG}",
        token=TOKENS["bucket-dropper"][0],
        warehouse=f"s3://{REST_TABLE_BUCKET}/",
        **keys_only,
    )
    name = f"k{uuid.uuid4().hex[:8]}"
    table = simple_table(client, (NAMESPACE,), name, appends=1)
    assert (
        upstream.load_table((NAMESPACE, name)).scan().to_arrow().num_rows == table.scan().to_arrow().num_rows
    )
    upstream.drop_table((NAMESPACE, name))


def test_a_pyiceberg_client_works_through_the_front_door_as_against_the_upstream(
    door: RestCatalog, upstream: RestCatalog
) -> None:
    name = f"t{uuid.uuid4().hex[:8]}"
    table = simple_table(door, (NAMESPACE,), name, appends=2)
    assert door.load_table((NAMESPACE, name)).scan().to_arrow().num_rows == 20
    assert upstream.load_table((NAMESPACE, name)).metadata_location == table.metadata_location
    assert sorted(door.list_tables((NAMESPACE,))) == sorted(upstream.list_tables((NAMESPACE,)))
    assert (NAMESPACE,) in door.list_namespaces()
    assert door.list_namespaces() == upstream.list_namespaces()
    renamed, registered = f"{name}r", f"{name}g"
    door.rename_table((NAMESPACE, name), (NAMESPACE, renamed))
    assert not upstream.table_exists((NAMESPACE, name))
    assert upstream.load_table((NAMESPACE, renamed)).metadata_location == table.metadata_location
    door.register_table((NAMESPACE, registered), table.metadata_location)
    assert upstream.load_table((NAMESPACE, registered)).metadata_location == table.metadata_location
    registered_rows = upstream.load_table((NAMESPACE, registered)).scan().to_arrow().num_rows
    assert door.load_table((NAMESPACE, registered)).scan().to_arrow().num_rows == registered_rows
    # The upstream's own errors, in the spec's model, come back as the upstream gave them.
    with pytest.raises(NoSuchTableError) as through_door:
        door.load_table((NAMESPACE, name))
    with pytest.raises(NoSuchTableError) as direct:
        upstream.load_table((NAMESPACE, name))
    assert str(through_door.value) == str(direct.value)
    door.drop_table((NAMESPACE, registered))
    door.drop_table((NAMESPACE, renamed))
    with pytest.raises(NoSuchTableError):
        upstream.load_table((NAMESPACE, renamed))


async def test_purge_table_through_the_front_door_is_a_durable_purge_of_exactly_its_files(
    door: RestCatalog, upstream: RestCatalog, purges: PurgeClient, s3: S3Store, api_url: str, tmp_path: Path
) -> None:
    """SeaweedFS's drop takes the table's storage with it: the purge deletes none of the files it
    planned, and says so (status, watch, list, its final event) rather than "0 files deleted"."""
    name, kept_name = f"p{uuid.uuid4().hex[:8]}", f"k{uuid.uuid4().hex[:8]}"
    purged = simple_table(door, (NAMESPACE,), name, appends=3)
    kept = simple_table(door, (NAMESPACE,), kept_name, appends=1)
    kept_files = s3.list(kept.location())
    assert s3.list(purged.location())
    # In a thread: the test worker shares this event loop, and must go on while the drop waits.
    await asyncio.to_thread(door.purge_table, (NAMESPACE, name))
    with pytest.raises(NoSuchTableError):
        upstream.load_table((NAMESPACE, name))
    purge_id = TableId(REST_CATALOG, [NAMESPACE], name).purge_id()
    status = (await purges.wait(purge_id)).status
    assert status.state is PurgeState.SUCCEEDED
    assert status.dropped_at is not None
    assert status.requested_by == "front-door:bucket-dropper"
    assert s3.list(purged.location()) == set()
    assert s3.list(kept.location()) == kept_files
    assert upstream.load_table((NAMESPACE, kept_name)).scan().to_arrow().num_rows == 10

    gone = status.counts.total().already_missing
    note = f"{gone} already gone — the catalog deleted the table's storage on drop"
    assert gone == status.files_total > 0 and status.storage_deleted_by_catalog
    assert status.outcome_note == note
    final = event_from(EventKind.COMPLETED, status, EventCursor(chain_id="run"), "run", datetime.now(UTC))
    assert (final.files_deleted, final.files_already_missing, final.outcome_note) == (0, gone, note)
    env = token_env(tmp_path)
    code, stdout, stderr = await icepurge_over_api(api_url, "purge", "id", REST_CATALOG, NAMESPACE, name)
    assert (code, stdout) == (0, f"{purge_id}\n"), stderr
    code, stdout, stderr = await icepurge_over_api(api_url, "purge", "watch", purge_id, **env)
    assert (code, stdout) == (0, f"SUCCEEDED: 0 files deleted, {note}\n"), stderr
    for _ in range(50):
        code, stdout, stderr = await icepurge_over_api(api_url, "purge", "list", "--table", name, **env)
        assert code == 0, stderr
        if purge_id in stdout:
            break
        await asyncio.sleep(0.2)
    row = next(line for line in stdout.splitlines() if purge_id in line)
    assert note in " ".join(row.split()), row


async def test_a_retried_drop_answers_as_the_first_did_and_starts_no_second_purge(
    door: RestCatalog, api_url: str, purges: PurgeClient, temporal_client: Client
) -> None:
    name = f"r{uuid.uuid4().hex[:8]}"
    simple_table(door, (NAMESPACE,), name, appends=1)
    token = TOKENS["bucket-dropper"][0]
    first = await asyncio.to_thread(_delete, api_url, name, token)
    assert first.status_code == 204, first.text
    purge_id = first.headers[PURGE_ID_HEADER]
    assert purge_id == TableId(REST_CATALOG, [NAMESPACE], name).purge_id()
    metric, took = first.headers[SERVER_TIMING_HEADER].split(";dur=")
    assert metric == SERVER_TIMING_METRIC and 0 < float(took) < first.elapsed.total_seconds() * 1000
    again = await asyncio.to_thread(_delete, api_url, name, token)
    assert (again.status_code, again.headers[PURGE_ID_HEADER]) == (204, purge_id)
    await purges.wait(purge_id)
    after = await asyncio.to_thread(_delete, api_url, name, token)
    assert (after.status_code, after.headers[PURGE_ID_HEADER]) == (204, purge_id)
    assert await _runs(temporal_client, purge_id) == 1
    missing = await asyncio.to_thread(_delete, api_url, f"never{uuid.uuid4().hex[:6]}", token)
    assert missing.status_code == 404
    assert missing.json()["error"]["type"] == "NoSuchTableException"


async def test_a_drop_that_does_not_say_purge_is_one_where_the_catalog_says_so(
    door: RestCatalog, upstream: RestCatalog, api_url: str, purges: PurgeClient, s3: S3Store
) -> None:
    """Iceberg's Spark runtimes up to 1.10 send `DROP TABLE ... PURGE` as a DELETE that doesn't say
    purgeRequested, then delete the files themselves (apache/iceberg#14743): on a catalog with
    purge_unspecified_drops that DELETE is an icepurge purge. An explicit purgeRequested=false
    (PyIceberg, iceberg-js) stays a plain drop there, and on other catalogs an unsaid one is one."""
    token = TOKENS["bucket-dropper"][0]
    unsaid, said_no, elsewhere = (f"{kind}{uuid.uuid4().hex[:8]}" for kind in ("u", "n", "e"))
    tables = {
        name: simple_table(door, (NAMESPACE,), name, appends=1) for name in (unsaid, said_no, elsewhere)
    }
    answer = await asyncio.to_thread(_delete, api_url, unsaid, token, UNSAID_PURGE_CATALOG, {})
    assert answer.status_code == 204, answer.text
    purge_id = answer.headers[PURGE_ID_HEADER]
    assert purge_id == TableId(UNSAID_PURGE_CATALOG, [NAMESPACE], unsaid).purge_id()
    status = (await purges.wait(purge_id)).status
    assert status.state is PurgeState.SUCCEEDED
    assert status.dropped_at is not None and status.files_total > 0
    assert not upstream.table_exists((NAMESPACE, unsaid))
    assert s3.list(tables[unsaid].location()) == set()
    for name, catalog, params in (
        (said_no, UNSAID_PURGE_CATALOG, {"purgeRequested": "false"}),
        (elsewhere, REST_CATALOG, {}),
    ):
        plain = await asyncio.to_thread(_delete, api_url, name, token, catalog, params)
        assert plain.status_code == 204, plain.text
        assert PURGE_ID_HEADER not in plain.headers
        assert not upstream.table_exists((NAMESPACE, name))
        with pytest.raises(PurgeNotFoundError):
            await purges.status(TableId(catalog, [NAMESPACE], name).purge_id())


def test_a_caller_without_the_right_drops_nothing(
    api_url: str, stack: EmbeddedStack, door: RestCatalog, upstream: RestCatalog
) -> None:
    name = f"a{uuid.uuid4().hex[:8]}"
    simple_table(door, (NAMESPACE,), name, appends=1)
    reader = _door(api_url, stack, TOKENS["bucket-reader"][0])
    assert reader.load_table((NAMESPACE, name)).scan().to_arrow().num_rows == 10
    with pytest.raises(ForbiddenError):
        reader.purge_table((NAMESPACE, name))
    refused: dict[str, Any] = _delete(api_url, name, "not-a-token").json()
    assert refused["error"]["code"] == 401
    other = _delete(api_url, name, TOKENS["lake-dropper"][0])
    assert other.status_code == 403
    assert upstream.load_table((NAMESPACE, name)).scan().to_arrow().num_rows == 10


def test_a_catalog_the_front_door_does_not_serve_is_not_found(api_url: str) -> None:
    answer = httpx.get(
        f"{api_url}/iceberg/lake/v1/config", headers={"Authorization": f"Bearer {TOKENS['admin'][0]}"}
    )
    assert answer.status_code == 404
    assert answer.json()["error"]["type"] == "NotFoundException"


ICEBERG_JS = TESTS / "iceberg_js"


async def test_iceberg_js_drops_a_table_with_purge_through_the_front_door(
    door: RestCatalog, api_url: str, upstream: RestCatalog, purges: PurgeClient, s3: S3Store
) -> None:
    node = shutil.which("node")
    if node is None or not (ICEBERG_JS / "node_modules" / "iceberg-js").exists():
        pytest.skip(
            "needs Node and iceberg-js (make install installs it from tests/iceberg_js when npm is here)"
        )
    name = f"js{uuid.uuid4().hex[:8]}"
    table = simple_table(door, (NAMESPACE,), name, appends=2)
    run = await asyncio.create_subprocess_exec(
        node,
        str(ICEBERG_JS / "drop.mjs"),
        f"{api_url}/iceberg/{REST_CATALOG}",
        TOKENS["bucket-dropper"][0],
        f"s3://{REST_TABLE_BUCKET}/",
        NAMESPACE,
        name,
        stdout=asyncio.subprocess.PIPE,
    )
    printed, _ = await run.communicate()
    assert json.loads(printed) == {"ok": True}
    with pytest.raises(NoSuchTableError):
        upstream.load_table((NAMESPACE, name))
    status = (await purges.wait(TableId(REST_CATALOG, [NAMESPACE], name).purge_id())).status
    assert status.state is PurgeState.SUCCEEDED
    assert s3.list(table.location()) == set()


async def test_dry_run_only_passes_the_drop_upstream_after_planning_what_icepurge_would_delete(
    door: RestCatalog, api_url: str, upstream: RestCatalog, purges: PurgeClient, s3: S3Store
) -> None:
    name = f"dry{uuid.uuid4().hex[:8]}"
    table = simple_table(door, (NAMESPACE,), name, appends=2)
    files = len(s3.list(table.location()))
    answer = await asyncio.to_thread(_delete, api_url, name, TOKENS["bucket-dropper"][0], REHEARSAL_CATALOG)
    assert answer.status_code == 204, answer.text
    rehearsal = answer.headers[PURGE_ID_HEADER]
    assert rehearsal.endswith("-dry-run")
    with pytest.raises(NoSuchTableError):
        upstream.load_table((NAMESPACE, name))
    status = (await purges.wait(rehearsal)).status
    assert status.state is PurgeState.SUCCEEDED and status.dry_run
    assert status.planned.files == files
    assert status.counts.total().deleted == 0
    assert status.dropped_at is None


async def test_a_drop_retried_after_the_front_door_died_mid_way_finds_the_purge_it_started(
    door: RestCatalog, api_url: str, upstream: RestCatalog, purges: PurgeClient, temporal_client: Client
) -> None:
    """The front door's first durable step is the purge's start: one that died after it (before
    or after the drop) left a purge that goes on; the client's retry answers with that purge."""
    for name in (f"c{uuid.uuid4().hex[:8]}", f"d{uuid.uuid4().hex[:8]}"):
        simple_table(door, (NAMESPACE,), name, appends=1)
        started = await purges.purge_by_name(
            REST_CATALOG, [NAMESPACE], name, requested_by="front-door:bucket-dropper"
        )
        if name.startswith("d"):
            await purges.wait(started)
        retried = await asyncio.to_thread(_delete, api_url, name, TOKENS["bucket-dropper"][0])
        assert (retried.status_code, retried.headers[PURGE_ID_HEADER]) == (204, started)
        await purges.wait(started)
        assert await _runs(temporal_client, started) == 1
        with pytest.raises(NoSuchTableError):
            upstream.load_table((NAMESPACE, name))


async def test_a_drop_while_temporal_is_down_is_a_503_in_the_spec_model_and_drops_nothing(
    api_settings: ApiSettings, door: RestCatalog, upstream: RestCatalog
) -> None:
    name = f"down{uuid.uuid4().hex[:8]}"
    simple_table(door, (NAMESPACE,), name, appends=1)
    dead = api_settings.model_copy(update={"temporal_address": f"127.0.0.1:{free_ports(1)[0]}"})
    transport = httpx.ASGITransport(app=create_app(dead))
    async with httpx.AsyncClient(transport=transport, base_url="http://front-door") as client:
        config = (await client.get(f"/iceberg/{REST_CATALOG}/v1/config", headers=_bearer())).json()
        prefix = config.get("overrides", {}).get("prefix") or config.get("defaults", {}).get("prefix")
        under = f"{quote(prefix, safe='')}/" if prefix else ""
        answer = await client.delete(
            f"/iceberg/{REST_CATALOG}/v1/{under}namespaces/{NAMESPACE}/tables/{name}",
            params={"purgeRequested": "true"},
            headers=_bearer(),
        )
    assert answer.status_code == 503
    assert answer.json()["error"]["type"] == "ServiceUnavailableException"
    assert upstream.load_table((NAMESPACE, name)).scan().to_arrow().num_rows == 10


async def test_an_upstream_that_keeps_storage_is_dropped_before_the_plan(
    lake: SqlCatalog, purges: PurgeClient, s3: S3Store, temporal_client: Client
) -> None:
    """The front door's drop path with upstream_keeps_storage, on a catalog that keeps a table's
    files on a plain drop (no REST catalog that does runs here; the SQL catalog does)."""
    table = simple_table(lake, ("door_keeps",), "t", appends=2)
    policy = FrontDoorPolicy(upstream_keeps_storage=True)
    outcome = await drop_with_purge(
        purges, TableId(LAKE_CATALOG, ["door_keeps"], "t"), "front-door:t", policy
    )
    assert outcome.dropped
    assert not lake.table_exists(("door_keeps", "t"))
    status = (await purges.wait(outcome.purge_id)).status
    assert status.state is PurgeState.SUCCEEDED
    assert s3.list(table.location()) == set()
    steps = {LOAD_TABLE_ACTIVITY, DROP_TABLE_ACTIVITY, PLAN_ACTIVITY}
    order = [name for name in await activities_in_order(temporal_client, outcome.purge_id) if name in steps]
    assert order == [LOAD_TABLE_ACTIVITY, DROP_TABLE_ACTIVITY, PLAN_ACTIVITY]


def _bearer() -> dict[str, str]:
    return {"Authorization": f"Bearer {TOKENS['bucket-dropper'][0]}"}


async def test_a_table_recreated_while_the_last_purge_runs_is_never_answered_dropped(
    door: RestCatalog, upstream: RestCatalog, api_url: str, purges: PurgeClient
) -> None:
    """Its purge id is the identifier's, so its DELETE finds the purge of the table that had the
    name before, still running. That purge dropped the other table: this one is answered 503
    (retry once that purge closes), and stays."""
    name = f"w{uuid.uuid4().hex[:8]}"
    simple_table(door, (NAMESPACE,), name, appends=1)
    options = {"hold_namespace": HOLD_NAMESPACE, "purge_after_seconds": 7 * 86_400}
    purge_id = await purges.purge_by_name(
        REST_CATALOG, [NAMESPACE], name, requested_by="pytest", options=options
    )
    await status_when(purges, purge_id, lambda status: status.state is PurgeState.SCHEDULED)
    newcomer = simple_table(door, (NAMESPACE,), name, appends=1)
    answer = await asyncio.to_thread(_delete, api_url, name, TOKENS["bucket-dropper"][0])
    assert answer.status_code == 503, answer.text
    assert answer.json()["error"]["type"] == "ServiceUnavailableException"
    assert answer.headers[PURGE_ID_HEADER] == purge_id
    assert upstream.load_table((NAMESPACE, name)).metadata_location == newcomer.metadata_location
    await purges.cancel(purge_id)
