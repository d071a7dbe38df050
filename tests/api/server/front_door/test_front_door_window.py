"""A retried DELETE inside the window between the upstream's drop and the purge recording it. The
upstream (SeaweedFS's REST catalog) acts at once; a proxy holds back its answer to whoever dropped
the table, and the client's retry comes meanwhile. It is answered from the purge that is dropping
the table: 204 with that purge's id once the drop is recorded, never 404 ("no such table") while
that purge is open. Plan first and held (service mode), and in pass-through mode."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterator
from urllib.parse import quote

import httpx
import pytest
from pyiceberg.catalog.rest import RestCatalog

from icepurge.api.clients.temporal_client import PurgeClient
from icepurge.api.server.front_door.drops import TableId
from icepurge.api.server.front_door.routes import PURGE_ID_HEADER
from icepurge.devstack.s3_proxy import FaultPlan
from icepurge.devstack.stack import EmbeddedStack
from tests.api_server import TOKENS
from tests.conftest import (
    SLOW_PASS_THROUGH_CATALOG,
)
from tests.drop_windows import HELD_DROPS, pass_through_caller, purged_once
from tests.store import S3Store
from tests.tables import simple_table

NAMESPACE = "window"
# Long enough for a retry to come and be answered inside the window.
HELD_SECONDS = 4.0


def _bearer() -> dict[str, str]:
    return {"Authorization": f"Bearer {TOKENS['bucket-dropper'][0]}"}


def table_url(door_url: str, catalog: str, name: str) -> str:
    config = httpx.get(f"{door_url}/iceberg/{catalog}/v1/config", headers=_bearer()).json()
    prefix = config.get("overrides", {}).get("prefix") or config.get("defaults", {}).get("prefix")
    base = f"{door_url}/iceberg/{catalog}/v1/" + (f"{quote(prefix, safe='')}/" if prefix else "")
    return f"{base}namespaces/{NAMESPACE}/tables/{name}"


def delete(url: str) -> httpx.Response:
    return httpx.delete(url, params={"purgeRequested": "true"}, headers=_bearer(), timeout=90)


@pytest.fixture(scope="module")
def upstream(rest_upstream: RestCatalog) -> RestCatalog:
    rest_upstream.create_namespace_if_not_exists((NAMESPACE,))
    return rest_upstream


@pytest.fixture
def answers(upstream_answers: FaultPlan, pass_through_answers: FaultPlan) -> Iterator[None]:
    yield
    for plan in (upstream_answers, pass_through_answers):
        plan.release_answers()


async def _retried_inside_the_window(url: str, held: FaultPlan, path_part: str) -> tuple[str, str]:
    """The first DELETE, held; once the upstream acted on the held call, the retry. Both answered
    204; returns the purge ids they named."""
    first = asyncio.create_task(asyncio.to_thread(delete, url))
    reached = asyncio.create_task(held.answer_held(path_part))
    await asyncio.wait([first, reached], return_when=asyncio.FIRST_COMPLETED)
    assert reached.done(), f"answered before the upstream acted: {(await first).text}"
    retried = await asyncio.to_thread(delete, url)
    answered = await first
    assert (retried.status_code, answered.status_code) == (204, 204), (retried.text, answered.text)
    return retried.headers[PURGE_ID_HEADER], answered.headers[PURGE_ID_HEADER]


@HELD_DROPS
async def test_a_retry_while_the_purge_drops_the_table_is_answered_from_that_purge(
    catalog: str,
    held_call: tuple[str, str],
    api_url: str,
    upstream: RestCatalog,
    upstream_answers: FaultPlan,
    answers: None,
    purges: PurgeClient,
    s3: S3Store,
) -> None:
    name = f"w{uuid.uuid4().hex[:8]}"
    table = simple_table(upstream, (NAMESPACE,), name, appends=2)
    method, path_part = held_call
    upstream_answers.hold_answers(method, path_part, HELD_SECONDS)
    purge_id = TableId(catalog, [NAMESPACE], name).purge_id()

    ids = await _retried_inside_the_window(table_url(api_url, catalog, name), upstream_answers, path_part)

    assert ids == (purge_id, purge_id)
    await purged_once(purges, purge_id, upstream, table, s3)


async def test_a_pass_through_retry_while_the_drop_is_unanswered_confirms_the_same_purge(
    api_url: str,
    stack: EmbeddedStack,
    upstream: RestCatalog,
    pass_through_answers: FaultPlan,
    answers: None,
    purges: PurgeClient,
    s3: S3Store,
) -> None:
    name = f"p{uuid.uuid4().hex[:8]}"
    table = simple_table(pass_through_caller(api_url, stack), (NAMESPACE,), name, appends=2)
    pass_through_answers.hold_answers("DELETE", f"/tables/{name}", HELD_SECONDS)

    url = table_url(api_url, SLOW_PASS_THROUGH_CATALOG, name)
    retried_id, first_id = await _retried_inside_the_window(url, pass_through_answers, f"/tables/{name}")

    assert retried_id == first_id
    await purged_once(purges, first_id, upstream, table, s3)


async def test_pass_through_drops_sent_at_once_confirm_one_purge_and_cancel_nothing(
    api_url: str,
    stack: EmbeddedStack,
    upstream: RestCatalog,
    pass_through_answers: FaultPlan,
    answers: None,
    purges: PurgeClient,
    s3: S3Store,
) -> None:
    """A client's DELETE and its retry both load the table before either drops it (the loads'
    answers held back): both attach to one purge of that snapshot, one drop finds the table
    gone (404). That one is the same drop, not a refusal: the purge goes on, both answer 204."""
    name = f"twice{uuid.uuid4().hex[:8]}"
    table = simple_table(pass_through_caller(api_url, stack), (NAMESPACE,), name, appends=2)
    pass_through_answers.hold_answers("GET", f"/tables/{name}", 1.5)
    url = table_url(api_url, SLOW_PASS_THROUGH_CATALOG, name)

    both = await asyncio.gather(asyncio.to_thread(delete, url), asyncio.to_thread(delete, url))

    assert [answer.status_code for answer in both] == [204, 204], [answer.text for answer in both]
    [purge_id] = {answer.headers[PURGE_ID_HEADER] for answer in both}
    await purged_once(purges, purge_id, upstream, table, s3)
