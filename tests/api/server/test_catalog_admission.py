"""A catalog name the deployment doesn't know is refused, at the HTTP door and by the worker for a
start that skipped the door: a typo can't switch the live-table guard off. A purge by name sent to
the snapshot route is refused as the other routes refuse it. Snapshots of a catalog declared
snapshot-only are taken, and status, report and events say their guard was not applied."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

import httpx
import pytest
from pyiceberg.catalog.sql import SqlCatalog
from temporalio.client import Client

from icepurge.api.clients.errors import PurgeFailedError
from icepurge.api.clients.temporal_client import PurgeClient
from icepurge.contract.events import EventKind
from icepurge.contract.names import ERROR_CATALOG_NOT_CONFIGURED
from icepurge.contract.purge_id import purge_id_for
from icepurge.contract.states import PurgeState
from icepurge.contract.status import GuardName
from icepurge.devstack.requests import request_for_table
from tests.api_server import bearer
from tests.conftest import LAKE_CATALOG, LISTENER_QUEUE
from tests.listener_workflow import EventListener
from tests.purge_helpers import request_for
from tests.store import S3Store
from tests.tables import simple_table

TYPO = "lakke"


@pytest.fixture
async def http() -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(timeout=60) as client:
        yield client


def _untouched(lake: SqlCatalog, s3: S3Store, identifier: tuple[str, ...], files: set[str]) -> None:
    assert lake.table_exists(identifier)
    assert files and all(s3.exists(uri) for uri in files)


async def test_the_api_refuses_a_snapshot_naming_a_catalog_it_does_not_know(
    lake: SqlCatalog, s3: S3Store, api_url: str, http: httpx.AsyncClient
) -> None:
    table = simple_table(lake, ("admission",), "live", appends=1)
    files = s3.list(table.location())
    request = request_for_table(TYPO, table, s3.properties, "pytest")
    answer = await http.post(
        f"{api_url}/v1/purges", json=request.model_dump(mode="json"), headers=bearer("admin")
    )
    assert answer.status_code == 404, answer.text
    detail = answer.json()["detail"]
    assert f"catalog {TYPO!r} is not configured" in detail
    assert LAKE_CATALOG in detail and "ICEPURGE_SNAPSHOT_ONLY_CATALOGS" in detail
    # Nothing started.
    started = await http.get(f"{api_url}/v1/purges/{purge_id_for(request)}", headers=bearer("admin"))
    assert started.status_code == 404
    _untouched(lake, s3, ("admission", "live"), files)


async def test_the_snapshot_route_refuses_a_purge_by_name_as_the_by_name_route_would(
    lake: SqlCatalog, s3: S3Store, api_url: str, http: httpx.AsyncClient
) -> None:
    table = simple_table(lake, ("admission",), "named", appends=1)
    files = s3.list(table.location())
    by_name = {"catalog": LAKE_CATALOG, "namespace": ["admission"], "table": "named", "requested_by": "x"}
    # A token that may start purges but not drop tables gets no drop through this route.
    answer = await http.post(f"{api_url}/v1/purges", json=by_name, headers=bearer("lake-starter"))
    assert answer.status_code == 422, answer.text
    detail = answer.json()["detail"]
    assert "metadata_location" in detail and f"/v1/catalogs/{LAKE_CATALOG}/purges" in detail
    _untouched(lake, s3, ("admission", "named"), files)
    # An unknown catalog: the same answer as the by-name route's.
    unknown = await http.post(
        f"{api_url}/v1/purges", json={**by_name, "catalog": TYPO}, headers=bearer("admin")
    )
    by_route = await http.post(
        f"{api_url}/v1/catalogs/{TYPO}/purges",
        json={"namespace": ["admission"], "table": "named"},
        headers=bearer("admin"),
    )
    assert unknown.status_code == by_route.status_code == 404
    assert unknown.json() == by_route.json()
    assert f"catalog {TYPO!r} is not configured" in unknown.json()["detail"]


async def test_a_worker_refuses_a_snapshot_of_an_unknown_catalog_that_skipped_the_door(
    lake: SqlCatalog, purges: PurgeClient, s3: S3Store
) -> None:
    """The issue's case: a live table of the configured catalog, purged by snapshot under a
    catalog name the deployment doesn't know; before, the guard said 'not applied' and every
    file went."""
    table = simple_table(lake, ("admission",), "typo", appends=1)
    files = s3.list(table.location())
    request = request_for_table("prod", table, s3.properties, "pytest")
    with pytest.raises(PurgeFailedError) as refused:
        await purges.wait(await purges.start(request))
    assert refused.value.error_type == ERROR_CATALOG_NOT_CONFIGURED
    assert "catalog 'prod' is not configured" in refused.value.reason
    assert LAKE_CATALOG in refused.value.reason
    status = await purges.status(purge_id_for(request))
    assert status.counts.total().deleted == 0
    _untouched(lake, s3, ("admission", "typo"), files)


@pytest.mark.usefixtures("listener")
async def test_a_snapshot_only_catalog_says_everywhere_that_no_live_table_guard_ran(
    catalog: SqlCatalog, purges: PurgeClient, s3: S3Store, temporal_client: Client
) -> None:
    table = simple_table(catalog, ("admission",), "handed_over", appends=1)
    catalog.drop_table(("admission", "handed_over"))
    listening = await temporal_client.start_workflow(
        EventListener.run, id="listener-snapshot-only", task_queue=LISTENER_QUEUE
    )
    request = request_for(table, s3.properties).model_copy(
        update={"notify_workflow_id": "listener-snapshot-only"}
    )
    status = (await purges.wait(await purges.start(request))).status
    assert status.state is PurgeState.SUCCEEDED
    guard = next(guard for guard in status.guards if guard.guard is GuardName.LIVE_TABLE)
    assert not guard.applied
    assert "'tests' is declared snapshot-only" in guard.detail
    assert status.report_location is not None
    report = json.loads(s3.read(status.report_location))
    assert [entry["detail"] for entry in report["guards"] if entry["guard"] == "live_table"] == [guard.detail]
    events = await listening.result()
    assert events[-1].kind is EventKind.COMPLETED
    assert events[-1].guards_not_applied == [f"live_table: {guard.detail}"]
