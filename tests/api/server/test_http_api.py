"""Every endpoint through a real HTTP server against the real Temporal dev server: the auth
matrix, idempotent start, errors, nested namespaces, both client transports, no secret out."""

from __future__ import annotations

import asyncio
import base64
import json
import logging
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from pyiceberg.catalog.sql import SqlCatalog

from icepurge.api.clients.errors import (
    PurgeAccessDeniedError,
    PurgeControlRejectedError,
    PurgeNotFoundError,
    PurgeServiceUnavailableError,
)
from icepurge.api.clients.http_client import HttpPurgeClient
from icepurge.api.clients.listing import PurgeFilter
from icepurge.api.clients.temporal_client import PurgeClient
from icepurge.api.server.settings import ApiSettings
from icepurge.contract.request import PurgeRequest
from icepurge.contract.states import PurgeState
from icepurge.devstack.api_server import serve_api
from icepurge.devstack.free_ports import free_ports
from icepurge.devstack.requests import request_for_table
from icepurge.devstack.s3_proxy import s3_proxy, through_proxy
from tests.api_server import CATALOG_A, CATALOG_B, TOKENS, bearer
from tests.purge_helpers import status_when
from tests.store import S3Store
from tests.tables import simple_table


@pytest.fixture
async def http() -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(timeout=60) as client:
        yield client


def _request(catalog: SqlCatalog, s3: S3Store, catalog_name: str, table: str, **options: Any) -> PurgeRequest:
    made = simple_table(catalog, ("api",), table, appends=1)
    return request_for_table(catalog_name, made, s3.properties, "api-test", **options)


def _json(request: PurgeRequest) -> dict[str, Any]:
    return request.model_dump(mode="json")


async def test_start_is_idempotent_and_points_at_the_status(
    catalog: SqlCatalog, s3: S3Store, api_url: str, http: httpx.AsyncClient
) -> None:
    body = _json(_request(catalog, s3, CATALOG_A, "idempotent"))
    first = await http.post(f"{api_url}/v1/purges", json=body, headers=bearer("a-full"))
    second = await http.post(f"{api_url}/v1/purges", json=body, headers=bearer("a-full"))
    assert first.status_code == second.status_code == 202
    assert first.json()["purge_id"] == second.json()["purge_id"]
    assert first.headers["Location"] == first.json()["status_url"]
    assert first.headers["Location"].startswith(f"{api_url}/v1/purges/")
    status = await http.get(first.headers["Location"], headers=bearer("a-reader"))
    assert status.status_code == 200
    assert status.json()["catalog"] == CATALOG_A
    assert first.json()["closed"] is None
    # Once it closed (the workflow, not only its status), the same start changes nothing, and
    # the answer says so.
    for _ in range(300):
        late = await http.post(f"{api_url}/v1/purges", json=body, headers=bearer("a-full"))
        if late.json()["closed"]:
            break
        await asyncio.sleep(0.2)
    assert late.json()["purge_id"] == first.json()["purge_id"]
    assert "already SUCCEEDED" in late.json()["closed"]


async def test_auth_matrix(catalog: SqlCatalog, s3: S3Store, api_url: str, http: httpx.AsyncClient) -> None:
    # Held SCHEDULED, so the cancel at the end finds it running.
    body_a = _json(_request(catalog, s3, CATALOG_A, "matrix_a", purge_after_seconds=3600))
    body_b = _json(_request(catalog, s3, CATALOG_B, "matrix_b"))
    purge_b = (await http.post(f"{api_url}/v1/purges", json=body_b, headers=bearer("admin"))).json()[
        "purge_id"
    ]
    purge_a = (await http.post(f"{api_url}/v1/purges", json=body_a, headers=bearer("admin"))).json()[
        "purge_id"
    ]

    async def call(action: str, headers: dict[str, str], purge: str = purge_a, body: Any = body_a) -> int:
        if action == "start":
            response = await http.post(f"{api_url}/v1/purges", json=body, headers=headers)
        elif action == "read":
            response = await http.get(f"{api_url}/v1/purges/{purge}", headers=headers)
        elif action == "list":
            response = await http.get(
                f"{api_url}/v1/purges", params={"catalog": body["catalog"]}, headers=headers
            )
        else:
            response = await http.post(f"{api_url}/v1/purges/{purge}/cancel", headers=headers)
        return response.status_code

    bad = {"Authorization": "Bearer not-a-token"}
    for action in ("start", "read", "list", "cancel"):
        assert await call(action, {}) == 401, action
        assert await call(action, bad) == 401, action
        assert await call(action, {"Authorization": "Basic abc"}) == 401, action
        # Scoped to catalog A: nothing of catalog B.
        assert await call(action, bearer("a-full"), purge_b, body_b) == 403, action
    assert await call("start", bearer("a-reader")) == 403
    assert await call("cancel", bearer("a-reader")) == 403
    assert await call("read", bearer("a-reader")) == 200
    assert await call("list", bearer("a-reader")) == 200
    assert await call("start", bearer("a-full")) == 202
    assert await call("cancel", bearer("a-full")) == 202
    unauthorized = await http.get(f"{api_url}/v1/purges", headers=bad)
    assert unauthorized.headers["WWW-Authenticate"] == "Bearer"
    # An unfiltered list shows a scoped token only its own catalogs.
    listed = await http.get(f"{api_url}/v1/purges", headers=bearer("a-reader"))
    assert {item["catalog"] for item in listed.json()["items"]} <= {CATALOG_A}


async def test_without_auth_configured_requests_are_refused_unless_insecure_dev(
    api_settings: ApiSettings, http: httpx.AsyncClient
) -> None:
    unconfigured = api_settings.model_copy(update={"api_auth_file": None})
    with serve_api(unconfigured) as url:
        refused = await http.get(f"{url}/v1/purges", headers=bearer("admin"))
    assert refused.status_code == 401
    assert "ICEPURGE_API_AUTH_FILE" in refused.json()["detail"]
    with serve_api(unconfigured.model_copy(update={"api_insecure_dev": True})) as url:
        allowed = await http.get(f"{url}/v1/purges")
    assert allowed.status_code == 200


async def test_insecure_dev_mode_says_once_that_it_ignores_a_token(
    api_settings: ApiSettings, http: httpx.AsyncClient, caplog: pytest.LogCaptureFixture
) -> None:
    """A caller who set a token expects it to count: the log says, once, that nothing checked it."""
    caplog.set_level(logging.INFO)
    insecure = api_settings.model_copy(update={"api_auth_file": None, "api_insecure_dev": True})
    with serve_api(insecure) as url:
        for _ in range(3):
            assert (await http.get(f"{url}/v1/purges", headers=bearer("admin"))).status_code == 200
    said = [record.getMessage() for record in caplog.records if "does not check" in record.getMessage()]
    assert len(said) == 1 and "ICEPURGE_API_AUTH_FILE" in said[0], said
    assert TOKENS["admin"][0] not in caplog.text


async def test_errors_name_the_problem(api_url: str, http: httpx.AsyncClient, s3: S3Store) -> None:
    headers = bearer("admin")
    valid = {
        "catalog": CATALOG_A,
        "namespace": ["api"],
        "table": "t",
        "metadata_location": "s3://warehouse/t/metadata/v1.metadata.json",
        "requested_by": "me",
    }
    missing = await http.post(f"{api_url}/v1/purges", json={**valid, "table": None}, headers=headers)
    assert missing.status_code == 422
    assert "table" in json.dumps(missing.json())
    scheme = await http.post(
        f"{api_url}/v1/purges",
        json={**valid, "metadata_location": "ftp://x/v1.metadata.json"},
        headers=headers,
    )
    assert scheme.status_code == 422
    assert "metadata_location" in json.dumps(scheme.json())
    untyped = await http.post(f"{api_url}/v1/purges", content=json.dumps(valid), headers=headers)
    assert untyped.status_code == 422
    assert "Content-Type: application/json" in untyped.json()["detail"][0]["msg"], untyped.json()
    huge = {**valid, "file_io_properties": {"padding": "x" * 100_000}}
    assert (await http.post(f"{api_url}/v1/purges", json=huge, headers=headers)).status_code == 413
    unknown = await http.get(f"{api_url}/v1/purges/icepurge-{'0' * 32}", headers=headers)
    assert unknown.status_code == 404
    odd = await http.get(f"{api_url}/v1/purges/not%20an%20id", headers=headers)
    assert odd.status_code == 404
    bad_filter = await http.get(f"{api_url}/v1/purges", params={"table": "it's"}, headers=headers)
    assert bad_filter.status_code == 422
    # Found by the fuzzer: a NUL broke the visibility store's query, answered as a 503 "retry".
    for name in ("catalog", "table", "requested_by", "namespace"):
        control = await http.get(f"{api_url}/v1/purges", params={name: "a\x00b"}, headers=headers)
        assert control.status_code == 422, name
        assert name in control.json()["detail"] or "control characters" in control.json()["detail"]
    nul_table = await http.post(f"{api_url}/v1/purges", json={**valid, "table": "a\x00b"}, headers=headers)
    assert nul_table.status_code == 422
    bad_page = await http.get(f"{api_url}/v1/purges", params={"page_token": "%%%"}, headers=headers)
    assert bad_page.status_code == 422
    # Found by the fuzzer: valid base64 the visibility store can't decode came back UNKNOWN (502).
    undecodable = base64.urlsafe_b64encode(b"0").decode()
    foreign_page = await http.get(f"{api_url}/v1/purges", params={"page_token": undecodable}, headers=headers)
    assert foreign_page.status_code == 422
    assert "page_token" in foreign_page.json()["detail"]
    assert (await http.get(f"{api_url}/healthz")).status_code == 200
    assert (await http.get(f"{api_url}/readyz")).status_code == 200
    docs = await http.get(f"{api_url}/docs")
    assert docs.status_code == 200
    # Nothing from outside: only the API's own origin may serve what the doc pages load.
    assert '"validatorUrl": null' in docs.text
    for page in (docs, await http.get(f"{api_url}/redoc")):
        policy = page.headers["Content-Security-Policy"]
        assert "img-src 'self' data:;" in policy and "default-src 'self';" in policy
        assert "http" not in policy


async def test_temporal_unreachable_is_503_with_retry_after(
    api_settings: ApiSettings, http: httpx.AsyncClient
) -> None:
    (closed,) = free_ports(1)
    down = api_settings.model_copy(update={"temporal_address": f"127.0.0.1:{closed}"})
    with serve_api(down) as url:
        listed = await http.get(f"{url}/v1/purges", headers=bearer("admin"))
        ready = await http.get(f"{url}/readyz")
        async with HttpPurgeClient(url, TOKENS["admin"][0]) as client:
            with pytest.raises(PurgeServiceUnavailableError):
                await client.status("icepurge-x")
    assert listed.status_code == ready.status_code == 503
    assert listed.headers["Retry-After"] == "5"
    assert "Traceback" not in listed.text


async def test_nested_namespaces_round_trip(
    catalog: SqlCatalog, s3: S3Store, api_url: str, purges: PurgeClient
) -> None:
    levels = ["dotted.level", "with space", "slash/level", "ünïcödé"]
    table = simple_table(catalog, ("api", "nested"), "round_trip", appends=1)
    request = request_for_table(CATALOG_A, table, s3.properties, "api-test")
    request = request.model_copy(update={"namespace": levels})
    async with HttpPurgeClient(api_url, TOKENS["a-full"][0]) as client:
        purge_id = await client.start(request)
        status = await client.status(purge_id)
        found = await _listed(client, PurgeFilter(catalog=CATALOG_A, namespace=levels), purge_id)
    assert status.namespace == levels
    assert found
    assert (await purges.status(purge_id)).namespace == levels


async def _listed(client: HttpPurgeClient | PurgeClient, purge_filter: PurgeFilter, purge_id: str) -> bool:
    """Visibility is eventually consistent: a just-started purge shows up within moments."""
    for _ in range(100):
        page = await client.list(purge_filter)
        if any(item.purge_id == purge_id for item in page.items):
            return True
        await asyncio.sleep(0.1)
    return False


async def test_both_transports_return_the_same_results_and_errors(
    catalog: SqlCatalog, s3: S3Store, api_url: str, purges: PurgeClient
) -> None:
    request = _request(catalog, s3, CATALOG_A, "transports")
    async with HttpPurgeClient(api_url, TOKENS["a-full"][0]) as http_client:
        purge_id = await http_client.start(request)
        assert await purges.start(request) == purge_id
        over_http = await http_client.wait(purge_id)
        direct = await purges.wait(purge_id)
        assert over_http.status == direct.status
        assert await http_client.status(purge_id) == await purges.status(purge_id)
        for client in (http_client, purges):
            with pytest.raises(PurgeNotFoundError):
                await client.status(f"icepurge-{'f' * 32}")
        with pytest.raises(PurgeAccessDeniedError) as denied:
            await http_client.list(PurgeFilter(catalog=CATALOG_B))
    assert denied.value.status_code == 403
    assert over_http.status.state is PurgeState.SUCCEEDED


async def test_list_filters_and_pages(catalog: SqlCatalog, s3: S3Store, api_url: str) -> None:
    async with HttpPurgeClient(api_url, TOKENS["admin"][0]) as client:
        ids = {
            await client.start(_request(catalog, s3, "api-paged", f"paged_{index}", dry_run=True))
            for index in range(3)
        }
        for purge_id in ids:
            await client.wait(purge_id)
        seen: set[str] = set()
        token = None
        for _ in range(100):
            page = await client.list(PurgeFilter(catalog="api-paged"), page_size=2, page_token=token)
            assert len(page.items) <= 2
            seen |= {item.purge_id for item in page.items}
            token = page.next_page_token
            if token is None:
                if seen == ids:
                    break
                seen.clear()
                await asyncio.sleep(0.2)
        succeeded = await client.list(PurgeFilter(catalog="api-paged", state=PurgeState.SUCCEEDED))
    assert seen == ids
    assert {item.purge_id for item in succeeded.items} == ids


async def test_cancel_stops_a_running_purge(
    catalog: SqlCatalog, s3: S3Store, api_url: str, http: httpx.AsyncClient, stack: Any
) -> None:
    table = simple_table(catalog, ("api",), "cancelled", appends=4)
    with s3_proxy(stack.ports.s3) as (port, faults):
        faults.delete_delay = 3.0
        request = request_for_table(CATALOG_A, table, through_proxy(s3.properties, port), "api-test")
        async with HttpPurgeClient(api_url, TOKENS["a-full"][0]) as client:
            purge_id = await client.start(request)
            while not faults.delete_times:
                await asyncio.sleep(0.1)
            await client.cancel(purge_id)
            status = await asyncio.wait_for(
                status_when(client, purge_id, lambda current: current.state is PurgeState.CANCELLED),
                timeout=60,
            )
    assert status.state is PurgeState.CANCELLED


async def test_cancel_of_a_finished_purge_is_refused_as_finished(
    catalog: SqlCatalog, s3: S3Store, api_url: str, http: httpx.AsyncClient
) -> None:
    """The server accepts a cancel of a closed run without a word; it was answered "cancel
    requested" (202) for a purge that could no longer be cancelled."""
    async with HttpPurgeClient(api_url, TOKENS["a-full"][0]) as client:
        purge_id = await client.start(_request(catalog, s3, CATALOG_A, "cancelled_late"))
        succeeded = status_when(client, purge_id, lambda current: current.state is PurgeState.SUCCEEDED)
        await asyncio.wait_for(succeeded, timeout=60)
        # The status reads SUCCEEDED while the run delivers its final event; a cancel is refused
        # once the run itself has closed.
        for _ in range(300):
            refused = await http.post(f"{api_url}/v1/purges/{purge_id}/cancel", headers=bearer("a-full"))
            if refused.status_code != 202:
                break
            await asyncio.sleep(0.2)
        assert refused.status_code == 409, refused.text
        assert "has already finished (SUCCEEDED)" in refused.json()["detail"]
        with pytest.raises(PurgeControlRejectedError, match="nothing to cancel"):
            await client.cancel(purge_id)
        assert (await client.status(purge_id)).state is PurgeState.SUCCEEDED


async def test_no_secret_in_any_response_or_log(
    catalog: SqlCatalog, s3: S3Store, api_url: str, http: httpx.AsyncClient, caplog: pytest.LogCaptureFixture
) -> None:
    secret = s3.properties["s3.secret-access-key"]
    body = _json(_request(catalog, s3, CATALOG_A, "secret"))
    caplog.set_level(logging.DEBUG)
    started = await http.post(f"{api_url}/v1/purges", json=body, headers=bearer("admin"))
    purge_id = started.json()["purge_id"]
    responses = [
        started,
        await http.get(f"{api_url}/v1/purges/{purge_id}", headers=bearer("admin")),
        await http.get(f"{api_url}/v1/purges", headers=bearer("admin")),
        await http.post(f"{api_url}/v1/purges", json={**body, "table": None}, headers=bearer("admin")),
        await http.post(f"{api_url}/v1/purges", json=[body], headers=bearer("admin")),
    ]
    assert responses[-1].status_code == 422
    assert all(secret not in response.text for response in responses)
    assert secret not in caplog.text
    assert TOKENS["admin"][0] not in caplog.text
