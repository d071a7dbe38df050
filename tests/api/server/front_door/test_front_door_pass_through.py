"""The front door in pass-through mode: every call, the drop included, goes upstream with the
caller's own credentials, so the upstream authorizes as it does without icepurge.

The upstream here is a REST catalog that authorizes bearer tokens: the API's own service-mode front
door for SeaweedFS's catalog (PASS_THROUGH_CATALOG → REST_CATALOG → SeaweedFS). SeaweedFS's own
catalog takes SigV4 only, which a caller can't sign for another host, so the pass-through drop
that succeeds runs against this chain; SeaweedFS itself is shown refusing a caller's bearer."""

from __future__ import annotations

import asyncio
import uuid
from urllib.parse import quote

import httpx
import pytest
from pyiceberg.catalog.rest import RestCatalog
from pyiceberg.exceptions import ForbiddenError, NoSuchTableError, UnauthorizedError

from icepurge.api.clients.errors import PurgeFailedError
from icepurge.api.clients.listing import PurgeFilter
from icepurge.api.clients.temporal_client import PurgeClient
from icepurge.api.server.front_door.drops import TableId
from icepurge.api.server.front_door.pass_through import REQUESTED_BY, snapshot_request
from icepurge.api.server.front_door.policy import FrontDoorPolicy
from icepurge.api.server.front_door.routes import PURGE_ID_HEADER
from icepurge.contract.names import ERROR_DROP_UNCONFIRMED
from icepurge.contract.request import PurgeRequest
from icepurge.contract.states import PurgeState
from icepurge.devstack.stack import EmbeddedStack
from tests.api_server import TOKENS
from tests.conftest import PASS_THROUGH_CATALOG, REST_TABLE_BUCKET
from tests.purge_helpers import assert_counts_add_up
from tests.store import S3Store
from tests.tables import simple_table

NAMESPACE = "passing"


def _caller(api_url: str, stack: EmbeddedStack, token: str) -> RestCatalog:
    return RestCatalog(
        f"caller{uuid.uuid4().hex[:6]}",
        uri=f"{api_url}/iceberg/{PASS_THROUGH_CATALOG}",
        token=token,
        warehouse=f"s3://{REST_TABLE_BUCKET}/",
        **stack.s3_properties,
    )


@pytest.fixture(scope="module")
def dropper(api_url: str, stack: EmbeddedStack) -> RestCatalog:
    caller = _caller(api_url, stack, TOKENS["bucket-dropper"][0])
    caller.create_namespace_if_not_exists((NAMESPACE,))
    return caller


@pytest.fixture(scope="module")
def reader(api_url: str, stack: EmbeddedStack, dropper: RestCatalog) -> RestCatalog:
    return _caller(api_url, stack, TOKENS["bucket-reader"][0])


async def _purges_of(purges: PurgeClient, name: str) -> list[str]:
    page = await purges.list(
        PurgeFilter(catalog=PASS_THROUGH_CATALOG, namespace=[NAMESPACE], table=name), page_size=10
    )
    return [item.purge_id for item in page.items]


async def test_a_callers_drop_with_purge_is_authorized_upstream_and_purges_exactly_the_table(
    dropper: RestCatalog, purges: PurgeClient, s3: S3Store
) -> None:
    name, kept_name = f"p{uuid.uuid4().hex[:8]}", f"k{uuid.uuid4().hex[:8]}"
    table = simple_table(dropper, (NAMESPACE,), name, appends=3)
    kept = simple_table(dropper, (NAMESPACE,), kept_name, appends=1)
    kept_files = s3.list(kept.location())
    await asyncio.to_thread(dropper.purge_table, (NAMESPACE, name))
    with pytest.raises(NoSuchTableError):
        dropper.load_table((NAMESPACE, name))
    await asyncio.sleep(1)  # listings are eventually consistent
    [purge_id] = await _purges_of(purges, name)
    status = (await purges.wait(purge_id)).status
    assert status.state is PurgeState.SUCCEEDED, status
    assert status.requested_by == REQUESTED_BY
    assert status.metadata_location == table.metadata_location
    assert status.dropped_at is not None
    # SeaweedFS deletes storage on drop: the plan came first, every file counts as already missing.
    assert status.storage_deleted_by_catalog
    assert_counts_add_up(status)
    assert status.counts.total().already_missing == status.planned.files > 0
    assert s3.list(table.location()) == set()
    assert s3.list(kept.location()) == kept_files


async def test_a_retried_drop_answers_204_with_the_purge_that_dropped_the_table(
    dropper: RestCatalog, api_url: str, purges: PurgeClient
) -> None:
    name = f"r{uuid.uuid4().hex[:8]}"
    simple_table(dropper, (NAMESPACE,), name, appends=1)
    first = await asyncio.to_thread(_delete, api_url, name, TOKENS["bucket-dropper"][0])
    assert first.status_code == 204, first.text
    await asyncio.sleep(1)
    retried = await asyncio.to_thread(_delete, api_url, name, TOKENS["bucket-dropper"][0])
    assert retried.status_code == 204, retried.text
    assert retried.headers[PURGE_ID_HEADER] == first.headers[PURGE_ID_HEADER]
    assert (await purges.wait(first.headers[PURGE_ID_HEADER])).status.state is PurgeState.SUCCEEDED


async def test_a_caller_the_upstream_refuses_gets_its_answer_and_nothing_is_dropped_or_deleted(
    dropper: RestCatalog,
    reader: RestCatalog,
    api_url: str,
    stack: EmbeddedStack,
    purges: PurgeClient,
    s3: S3Store,
) -> None:
    name = f"f{uuid.uuid4().hex[:8]}"
    table = simple_table(dropper, (NAMESPACE,), name, appends=2)
    files = s3.list(table.location())
    # Reading is this caller's right upstream; dropping is not: the upstream's 403, as it said it.
    assert reader.load_table((NAMESPACE, name)).metadata_location == table.metadata_location
    with pytest.raises(ForbiddenError, match="may not drop"):
        await asyncio.to_thread(reader.purge_table, (NAMESPACE, name))
    with pytest.raises(UnauthorizedError):
        _caller(api_url, stack, "not-a-token")
    stranger = await asyncio.to_thread(_delete, api_url, name, "not-a-token")
    assert stranger.status_code == 401, stranger.text
    assert stranger.json()["error"]["type"] == "NotAuthorizedException"
    assert dropper.load_table((NAMESPACE, name)).scan().to_arrow().num_rows == 20
    assert s3.list(table.location()) == files
    # The reader's load passed, so a purge was recorded before the drop: cancelled, nothing deleted.
    await asyncio.sleep(1)
    [purge_id] = await _purges_of(purges, name)
    with pytest.raises(PurgeFailedError) as ended:
        await purges.wait(purge_id)
    assert ended.value.state == PurgeState.CANCELLED.value
    status = await purges.status(purge_id)
    assert status.dropped_at is None
    assert status.counts.total().deleted == 0
    # The same snapshot's purge closed before any drop: a caller refused again gets the upstream's
    # answer again, and one who may drop drops it. Both were "the purge ended CANCELLED before the
    # drop" (409), so nobody could drop the table through the front door until it changed.
    with pytest.raises(ForbiddenError, match="may not drop"):
        await asyncio.to_thread(reader.purge_table, (NAMESPACE, name))
    assert s3.list(table.location()) == files
    await _dropped_and_purged(api_url, name, purge_id, purges, s3, table.location(), files)
    with pytest.raises(NoSuchTableError):
        dropper.load_table((NAMESPACE, name))


async def test_a_purge_whose_drop_is_never_confirmed_deletes_nothing_and_says_so(
    dropper: RestCatalog, api_url: str, purges: PurgeClient, s3: S3Store, stack: EmbeddedStack
) -> None:
    """The front door died between recording the purge and the drop, and no client retried."""
    name = f"u{uuid.uuid4().hex[:8]}"
    table = simple_table(dropper, (NAMESPACE,), name, appends=1)
    files = s3.list(table.location())
    request = PurgeRequest(
        catalog=PASS_THROUGH_CATALOG,
        namespace=[NAMESPACE],
        table=name,
        metadata_location=table.metadata_location,
        file_io_properties=stack.s3_properties,
        requested_by=REQUESTED_BY,
        options={"await_drop_seconds": 1},
    )
    purge_id = await purges.start(request)
    with pytest.raises(PurgeFailedError) as failed:
        await purges.wait(purge_id)
    assert failed.value.error_type == ERROR_DROP_UNCONFIRMED
    assert "nothing was deleted" in str(failed.value)
    assert s3.list(table.location()) == files
    assert dropper.load_table((NAMESPACE, name)).scan().to_arrow().num_rows == 10
    # A client's drop afterwards finds this snapshot's purge closed before its drop, and starts it
    # again: it was refused with the unconfirmed purge's error (409), whoever asked.
    await _dropped_and_purged(api_url, name, purge_id, purges, s3, table.location(), files)


async def test_a_drop_retried_after_the_front_door_died_between_drop_and_confirmation_finishes_it(
    dropper: RestCatalog, api_url: str, purges: PurgeClient, s3: S3Store
) -> None:
    """The front door recorded the purge and dropped the table, then died: the purge waits in
    DROPPING; the client's retry finds the table gone and the purge waiting, and confirms it."""
    name = f"d{uuid.uuid4().hex[:8]}"
    table = simple_table(dropper, (NAMESPACE,), name, appends=2)
    url = _table_url(api_url, name)
    loaded = httpx.get(url, headers=_bearer("bucket-dropper")).json()
    request = snapshot_request(
        TableId(PASS_THROUGH_CATALOG, [NAMESPACE], name), loaded, dropper.properties, FrontDoorPolicy()
    )
    purge_id = await purges.start(request)
    for _ in range(600):
        if (await purges.status(purge_id)).state is PurgeState.DROPPING:
            break
        await asyncio.sleep(0.05)
    await asyncio.to_thread(dropper.drop_table, (NAMESPACE, name))
    await asyncio.sleep(1)
    retried = await asyncio.to_thread(_delete, api_url, name, TOKENS["bucket-dropper"][0])
    assert (retried.status_code, retried.headers[PURGE_ID_HEADER]) == (204, purge_id), retried.text
    assert (await purges.wait(purge_id)).status.state is PurgeState.SUCCEEDED
    assert s3.list(table.location()) == set()


def test_seaweedfs_refuses_a_callers_bearer_passed_through_to_it(stack: EmbeddedStack) -> None:
    """What pass-through in front of SeaweedFS's catalog itself would meet: it takes SigV4 only."""
    uri = stack.rest_catalog_properties(REST_TABLE_BUCKET)["uri"]
    bearer = _bearer("bucket-dropper")
    config = httpx.get(f"{uri}/v1/config", params={"warehouse": f"s3://{REST_TABLE_BUCKET}/"}).json()
    prefix = config.get("overrides", {}).get("prefix") or config.get("defaults", {}).get("prefix")
    base = f"{uri}/v1/{quote(prefix, safe='')}" if prefix else f"{uri}/v1"
    answer = httpx.get(f"{base}/namespaces", headers=bearer)
    assert answer.status_code in (401, 403), (answer.status_code, answer.text)


def _table_url(api_url: str, name: str) -> str:
    base = f"{api_url}/iceberg/{PASS_THROUGH_CATALOG}/v1"
    config = httpx.get(f"{base}/config", headers=_bearer("bucket-reader")).json()
    prefix = config.get("overrides", {}).get("prefix") or config.get("defaults", {}).get("prefix")
    under = f"{base}/{quote(prefix, safe='')}" if prefix else base
    return f"{under}/namespaces/{NAMESPACE}/tables/{name}"


async def _dropped_and_purged(
    api_url: str, name: str, purge_id: str, purges: PurgeClient, s3: S3Store, location: str, files: set[str]
) -> None:
    """A caller who may drop drops the table through the front door, by the purge of its snapshot."""
    dropped = await asyncio.to_thread(_delete, api_url, name, TOKENS["bucket-dropper"][0])
    assert (dropped.status_code, dropped.headers[PURGE_ID_HEADER]) == (204, purge_id), dropped.text
    status = (await purges.wait(purge_id)).status
    assert status.state is PurgeState.SUCCEEDED, status
    assert_counts_add_up(status)
    assert status.planned.files == len(files)
    assert s3.list(location) == set()


def _delete(api_url: str, name: str, token: str) -> httpx.Response:
    return httpx.delete(
        _table_url(api_url, name),
        params={"purgeRequested": "true"},
        headers={"Authorization": f"Bearer {token}"},
        timeout=60,
    )


def _bearer(token_name: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {TOKENS[token_name][0]}"}
