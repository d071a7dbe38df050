"""Drop and purge by name against a real SQLite catalog the workers know the PyIceberg way:
load, plan, drop the entry, delete; through the Python client, the HTTP API, the icepurge CLI and
the temporal CLI; protection and the `drop` role."""

from __future__ import annotations

import json

import httpx
import pytest
from pyiceberg.catalog.sql import SqlCatalog
from temporalio.client import Client

from icepurge.api.clients.errors import PurgeAccessDeniedError, PurgeFailedError, PurgeNotFoundError
from icepurge.api.clients.http_client import HttpPurgeClient
from icepurge.api.clients.temporal_client import PurgeClient
from icepurge.contract.controls import Stage
from icepurge.contract.names import (
    DROP_TABLE_ACTIVITY,
    ERROR_CATALOG_NOT_CONFIGURED,
    ERROR_PROTECTED,
    ERROR_TABLE_NOT_FOUND,
    LOAD_TABLE_ACTIVITY,
    PLAN_ACTIVITY,
    PROTECTED_PROPERTY,
)
from icepurge.contract.purge_id import purge_id_for
from icepurge.contract.states import PurgeState
from icepurge.contract.status import GuardName, PurgeStatus
from icepurge.contract.validation import by_name_request
from icepurge.devstack.stack import EmbeddedStack
from tests.api_server import TOKENS, bearer
from tests.cli_runner import icepurge, start_with_temporal_cli
from tests.conftest import LAKE_CATALOG, REST_CATALOG
from tests.purge_helpers import activities_in_order, assert_counts_add_up, request_for, sealed_history
from tests.store import S3Store
from tests.tables import add_delete_files, add_statistics, simple_table


def _guard(status: PurgeStatus, name: GuardName) -> tuple[bool, bool, str]:
    found = next(guard for guard in status.guards if guard.guard is name)
    return found.applied, found.passed, found.detail


async def test_purge_by_name_plans_drops_then_deletes_every_file(
    lake: SqlCatalog, purges: PurgeClient, s3: S3Store, stack: EmbeddedStack
) -> None:
    table = simple_table(lake, ("org", "sales", "eu"), "orders", appends=4)
    add_delete_files(table, "c1")
    table = lake.load_table(("org", "sales", "eu", "orders"))
    add_statistics(table)
    table = lake.load_table(("org", "sales", "eu", "orders"))
    assert s3.list(table.location())
    purge_id = await purges.purge_by_name(
        LAKE_CATALOG, ["org", "sales", "eu"], "orders", requested_by="pytest"
    )
    report = await purges.wait(purge_id)
    status = report.status
    assert status.state is PurgeState.SUCCEEDED
    assert status.metadata_location == table.metadata_location
    assert status.dropped_at is not None
    assert not status.storage_deleted_by_catalog
    assert ("org", "sales", "eu", "orders") not in lake.list_tables(("org", "sales", "eu"))
    assert s3.list(table.location()) == set()
    assert_counts_add_up(status)
    assert status.counts.total().deleted == status.planned.files
    assert _guard(status, GuardName.PROTECTION)[:2] == (True, True)
    assert _guard(status, GuardName.LIVE_TABLE)[:2] == (True, True)
    assert status.report_location is not None
    in_report = json.loads(s3.read(status.report_location))["guards"]
    assert [guard["guard"] for guard in in_report] == ["protection", "live_table"]
    # The loaded snapshot's FileIO properties carry the store's secret: sealed in history.
    assert s3.properties["s3.secret-access-key"].encode() not in await sealed_history(stack, purge_id)


async def test_drop_before_plan_drops_at_once_and_purges_the_loaded_snapshot_exactly(
    lake: SqlCatalog, purges: PurgeClient, s3: S3Store, temporal_client: Client
) -> None:
    table = simple_table(lake, ("org", "swift"), "t", appends=3)
    neighbour = simple_table(lake, ("org", "swift"), "kept", appends=1)
    kept = s3.list(neighbour.location())
    purge_id = await purges.purge_by_name(
        LAKE_CATALOG, ["org", "swift"], "t", requested_by="pytest", options={"drop_before_plan": True}
    )
    status = (await purges.wait(purge_id)).status
    assert status.state is PurgeState.SUCCEEDED
    assert status.metadata_location == table.metadata_location
    assert ("org", "swift", "t") not in lake.list_tables(("org", "swift"))
    assert s3.list(table.location()) == set()
    assert s3.list(neighbour.location()) == kept
    assert_counts_add_up(status)
    assert status.counts.total().deleted == status.planned.files > 0
    steps = {LOAD_TABLE_ACTIVITY, DROP_TABLE_ACTIVITY, PLAN_ACTIVITY}
    order = [name for name in await activities_in_order(temporal_client, purge_id) if name in steps]
    assert order == [LOAD_TABLE_ACTIVITY, DROP_TABLE_ACTIVITY, PLAN_ACTIVITY]


async def test_a_caller_waits_for_a_stage_inside_the_workflow(lake: SqlCatalog, purges: PurgeClient) -> None:
    """The front door's wait (an update the workflow answers once the stage is reached), on a
    purge held in its soft-delete window, then undropped."""
    simple_table(lake, ("org", "staged"), "t", appends=1)
    purge_id = await purges.purge_by_name(
        LAKE_CATALOG, ["org", "staged"], "t", requested_by="pytest", options={"purge_after_seconds": 3600}
    )
    dropped = await purges.await_stage(purge_id, Stage.DROPPED, 60)
    assert dropped is not None and dropped.dropped_at is not None
    planned = await purges.await_stage(purge_id, Stage.PLANNED, 60)
    assert planned is not None and planned.gc_enabled is not None
    await purges.undrop(purge_id)
    assert lake.table_exists(("org", "staged", "t"))


async def test_a_dry_run_by_name_plans_and_leaves_the_table_in_its_catalog(
    lake: SqlCatalog, purges: PurgeClient, s3: S3Store
) -> None:
    table = simple_table(lake, ("org", "rehearsal"), "t", appends=2)
    before = s3.list(table.location())
    purge_id = await purges.purge_by_name(
        LAKE_CATALOG, ["org", "rehearsal"], "t", requested_by="pytest", options={"dry_run": True}
    )
    assert purge_id.endswith("-dry-run")
    status = (await purges.wait(purge_id)).status
    assert status.state is PurgeState.SUCCEEDED
    assert status.dry_run and status.dropped_at is None
    assert status.planned.files == len(before)
    # The guard the real purge meets, run as a preview: the table's own entry, which the real
    # purge drops first, is left out.
    assert _guard(status, GuardName.LIVE_TABLE) == (
        True,
        True,
        "no live table in namespace scope uses the purged metadata or locations",
    )
    assert lake.load_table(("org", "rehearsal", "t")).metadata_location == table.metadata_location
    assert s3.list(table.location()) == before


async def test_a_second_start_by_name_attaches_to_the_running_purge(
    lake: SqlCatalog, purges: PurgeClient
) -> None:
    simple_table(lake, ("org", "twice"), "t", appends=1)
    first = await purges.purge_by_name(LAKE_CATALOG, ["org", "twice"], "t", requested_by="pytest")
    second = await purges.purge_by_name(LAKE_CATALOG, ["org", "twice"], "t", requested_by="pytest")
    assert first == second
    assert (await purges.wait(first)).status.state is PurgeState.SUCCEEDED


async def test_purge_by_name_through_the_http_api_needs_the_drop_role(
    lake: SqlCatalog, s3: S3Store, api_url: str
) -> None:
    table = simple_table(lake, ("web",), "clicks", appends=2)
    async with HttpPurgeClient(api_url, TOKENS["lake-starter"][0]) as starter:
        with pytest.raises(PurgeAccessDeniedError) as denied:
            await starter.purge_by_name(LAKE_CATALOG, ["web"], "clicks")
        assert denied.value.status_code == 403
    assert lake.table_exists(("web", "clicks"))
    async with HttpPurgeClient(api_url, TOKENS["admin"][0]) as admin:
        with pytest.raises(PurgeNotFoundError, match="not configured"):
            await admin.purge_by_name("nowhere", ["web"], "clicks")
    async with HttpPurgeClient(api_url, TOKENS["lake-dropper"][0]) as dropper:
        purge_id = await dropper.purge_by_name(LAKE_CATALOG, ["web"], "clicks")
        report = await dropper.wait(purge_id)
    assert report.status.state is PurgeState.SUCCEEDED
    assert report.status.requested_by == "lake-dropper"
    assert not lake.table_exists(("web", "clicks"))
    assert s3.list(table.location()) == set()


async def test_catalogs_are_listed_by_name_never_with_their_properties(api_url: str, s3: S3Store) -> None:
    async with HttpPurgeClient(api_url, TOKENS["admin"][0]) as admin:
        assert {LAKE_CATALOG, REST_CATALOG} <= set(await admin.catalogs())
    async with HttpPurgeClient(api_url, TOKENS["lake-dropper"][0]) as dropper:
        assert await dropper.catalogs() == [LAKE_CATALOG]
    answer = httpx.get(f"{api_url}/v1/catalogs", headers=bearer("admin"))
    assert s3.properties["s3.secret-access-key"] not in answer.text
    assert "sqlite" not in answer.text


async def test_purge_by_name_from_the_icepurge_cli_with_a_level_holding_a_dot(
    lake: SqlCatalog, purges: PurgeClient, s3: S3Store, stack: EmbeddedStack
) -> None:
    lake.create_namespace_if_not_exists(("cli", "v1.2"))
    table = simple_table(lake, ("cli", "v1.2"), "events", appends=2)
    code, out, err = await icepurge(
        stack, "purge", "table", LAKE_CATALOG, '["cli", "v1.2"]', "events", "--requested-by", "cli-user"
    )
    assert code == 0, err
    report = await purges.wait(out.strip())
    assert report.status.state is PurgeState.SUCCEEDED
    assert report.status.namespace == ["cli", "v1.2"]
    assert s3.list(table.location()) == set()


async def test_purge_by_name_from_the_temporal_cli_with_the_documented_json(
    lake: SqlCatalog, purges: PurgeClient, s3: S3Store, stack: EmbeddedStack, api_url: str
) -> None:
    table = simple_table(lake, ("tcli",), "events", appends=2)
    document = {
        "catalog": LAKE_CATALOG,
        "namespace": ["tcli"],
        "table": "events",
        "requested_by": "temporal-cli",
    }
    purge_id = purge_id_for(by_name_request(LAKE_CATALOG, ["tcli"], "events", requested_by="temporal-cli"))
    await start_with_temporal_cli(stack, api_url, purge_id, document)
    report = await purges.wait(purge_id)
    assert report.status.state is PurgeState.SUCCEEDED
    assert not lake.table_exists(("tcli", "events"))
    assert s3.list(table.location()) == set()


@pytest.mark.parametrize("holder", ["table", "namespace"])
async def test_a_protected_table_is_never_dropped(
    lake: SqlCatalog, purges: PurgeClient, s3: S3Store, holder: str
) -> None:
    protected = {PROTECTED_PROPERTY: "true"}
    lake.create_namespace_if_not_exists(("vault",))
    if holder == "namespace":
        # On an ancestor: the table's own namespace says nothing.
        lake.update_namespace_properties(("vault",), updates=protected)
    table = simple_table(
        lake, ("vault", holder), "gold", appends=1, properties=protected if holder == "table" else None
    )
    before = s3.list(table.location())
    purge_id = await purges.purge_by_name(LAKE_CATALOG, ["vault", holder], "gold", requested_by="pytest")
    with pytest.raises(PurgeFailedError) as failed:
        await purges.wait(purge_id)
    assert failed.value.error_type == ERROR_PROTECTED
    assert PROTECTED_PROPERTY in failed.value.reason
    assert lake.table_exists(("vault", holder, "gold"))
    assert s3.list(table.location()) == before


async def test_a_catalog_the_workers_dont_know_or_a_missing_table_fail_with_the_reason(
    lake: SqlCatalog, purges: PurgeClient
) -> None:
    unknown = await purges.purge_by_name("nowhere", ["a"], "b", requested_by="pytest")
    with pytest.raises(PurgeFailedError) as failed:
        await purges.wait(unknown)
    assert failed.value.error_type == ERROR_CATALOG_NOT_CONFIGURED
    assert "PYICEBERG_CATALOG__NOWHERE__" in failed.value.reason
    missing = await purges.purge_by_name(LAKE_CATALOG, ["org"], "never_created", requested_by="pytest")
    with pytest.raises(PurgeFailedError) as gone:
        await purges.wait(missing)
    assert gone.value.error_type == ERROR_TABLE_NOT_FOUND


async def test_a_new_run_failing_at_once_is_never_told_as_an_old_closed_purge(
    purges: PurgeClient, api_url: str
) -> None:
    """The table's next purge by name is a new run under the same id: its start says nothing of a
    closed purge, even when that run fails (no such table) before the answer is read — as the
    README walkthrough's third `purge table` once printed. With a request id, the start lands on
    the closed purge and says so."""
    missing = by_name_request(LAKE_CATALOG, ["org"], "never_there", requested_by="pytest")
    async with HttpPurgeClient(api_url, TOKENS["lake-dropper"][0]) as dropper:
        for client in (purges, dropper, purges, dropper):
            outcome = await client.begin(missing)
            assert outcome.closed is None, outcome.closed
            # The workflow's own close: its status says FAILED a moment before it.
            with pytest.raises(PurgeFailedError):
                await purges.wait(outcome.purge_id)
        named = missing.model_copy(update={"request_id": "once"})
        first = await dropper.begin(named)
        assert first.closed is None
        with pytest.raises(PurgeFailedError):
            await purges.wait(first.purge_id)
        again = await dropper.begin(named)
    assert again.purge_id == first.purge_id
    assert again.closed is not None and "already closed FAILED" in again.closed


async def test_a_snapshot_purge_of_an_unknown_catalog_says_the_guard_was_not_applied(
    catalog: SqlCatalog, purges: PurgeClient, s3: S3Store
) -> None:
    table = simple_table(catalog, ("byname",), "snapshot_only", appends=1)
    catalog.drop_table(("byname", "snapshot_only"))
    report = await purges.wait(await purges.start(request_for(table, s3.properties)))
    assert report.status.state is PurgeState.SUCCEEDED
    applied, passed, detail = _guard(report.status, GuardName.LIVE_TABLE)
    assert (applied, passed) == (False, True)
    assert "'tests' is declared snapshot-only" in detail
