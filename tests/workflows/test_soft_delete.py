"""Soft delete: a purge that plans and drops at once, then waits SCHEDULED, deleting nothing,
until its time, an expedite, or an undrop that registers the table again."""

from __future__ import annotations

import asyncio
import json
import logging

import pytest
from pyiceberg.catalog.sql import SqlCatalog
from temporalio.client import Client

from icepurge.api.cli.main import EXIT_CODES
from icepurge.api.clients.errors import PurgeControlRejectedError
from icepurge.api.clients.http_client import HttpPurgeClient
from icepurge.api.clients.listing import PurgeFilter
from icepurge.api.clients.temporal_client import PurgeClient
from icepurge.contract.states import PurgeState
from icepurge.devstack.stack import EmbeddedStack
from tests.api_server import TOKENS
from tests.cli_runner import icepurge
from tests.conftest import LAKE_CATALOG
from tests.purge_helpers import current_details, request_for, status_when
from tests.store import S3Store
from tests.tables import simple_table

WEEK = 7 * 86_400


async def _listed_scheduled(purges: PurgeClient, purge_id: str) -> bool:
    """Visibility is eventually consistent."""
    for _ in range(50):
        page = await purges.list(PurgeFilter(state=PurgeState.SCHEDULED), page_size=100)
        if any(item.purge_id == purge_id and item.scheduled_for for item in page.items):
            return True
        await asyncio.sleep(0.2)
    return False


async def test_undrop_during_the_window_brings_the_table_back_with_its_rows(
    lake: SqlCatalog,
    purges: PurgeClient,
    temporal_client: Client,
    s3: S3Store,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger="icepurge.events")
    table = simple_table(lake, ("soft", "keep"), "events", appends=3)
    before = s3.list(table.location())
    purge_id = await purges.purge_by_name(
        LAKE_CATALOG, ["soft", "keep"], "events", requested_by="pytest", options={"purge_after_seconds": WEEK}
    )
    scheduled = await status_when(purges, purge_id, lambda status: status.state is PurgeState.SCHEDULED)
    assert scheduled.dropped_at is not None and scheduled.scheduled_for is not None
    assert (scheduled.scheduled_for - scheduled.dropped_at).total_seconds() >= WEEK - 60
    assert not lake.table_exists(("soft", "keep", "events"))
    assert await _listed_scheduled(purges, purge_id)
    details = await current_details(temporal_client, purge_id)
    assert "**SCHEDULED**" in details and "| scheduled for |" in details and "| dropped |" in details
    await asyncio.sleep(1)
    assert s3.list(table.location()) == before
    undropped = await purges.undrop(purge_id)
    assert undropped.state is PurgeState.UNDROPPED
    report = await purges.wait(purge_id)
    assert report.status.state is PurgeState.UNDROPPED
    assert report.status.files_done == 0
    assert "registered" in (report.status.undropped_note or "")
    back = lake.load_table(("soft", "keep", "events"))
    assert back.metadata_location == table.metadata_location
    assert back.scan().to_arrow().num_rows == 30
    assert s3.list(table.location()) == before
    events = [json.loads(record.getMessage()) for record in caplog.records if purge_id in record.getMessage()]
    kinds = [event["kind"] for event in events]
    assert "scheduled" in kinds and kinds[-1] == "undropped"
    assert events[kinds.index("scheduled")]["scheduled_for"] is not None


async def test_expedite_purges_at_once_through_the_http_api(
    lake: SqlCatalog, s3: S3Store, api_url: str
) -> None:
    table = simple_table(lake, ("soft",), "hurry", appends=2)
    async with HttpPurgeClient(api_url, TOKENS["lake-dropper"][0]) as client:
        purge_id = await client.purge_by_name(
            LAKE_CATALOG, ["soft"], "hurry", options={"purge_after_seconds": WEEK}
        )
        await status_when(client, purge_id, lambda status: status.state is PurgeState.SCHEDULED)
        await client.expedite(purge_id)
        report = await client.wait(purge_id)
        assert report.status.state is PurgeState.SUCCEEDED
        with pytest.raises(PurgeControlRejectedError):
            await client.undrop(purge_id)
    assert s3.list(table.location()) == set()


async def test_undrop_is_refused_once_the_deletes_began(lake: SqlCatalog, purges: PurgeClient) -> None:
    simple_table(lake, ("soft",), "late", appends=1)
    purge_id = await purges.purge_by_name(
        LAKE_CATALOG, ["soft"], "late", requested_by="pytest", options={"purge_after_seconds": WEEK}
    )
    await status_when(purges, purge_id, lambda status: status.state is PurgeState.SCHEDULED)
    await purges.expedite(purge_id)
    with pytest.raises(PurgeControlRejectedError, match="only a SCHEDULED purge"):
        await purges.undrop(purge_id)
    assert (await purges.wait(purge_id)).status.state is PurgeState.SUCCEEDED
    assert not lake.table_exists(("soft", "late"))


async def test_undrop_is_refused_while_another_table_holds_the_name(
    lake: SqlCatalog, purges: PurgeClient, s3: S3Store
) -> None:
    table = simple_table(lake, ("soft",), "taken", appends=1)
    before = s3.list(table.location())
    purge_id = await purges.purge_by_name(
        LAKE_CATALOG, ["soft"], "taken", requested_by="pytest", options={"purge_after_seconds": WEEK}
    )
    await status_when(purges, purge_id, lambda status: status.state is PurgeState.SCHEDULED)
    newcomer = lake.create_table(("soft", "taken"), schema=table.schema(), location=f"{table.location()}-new")
    with pytest.raises(PurgeControlRejectedError, match="taken by another table"):
        await purges.undrop(purge_id)
    still = await purges.status(purge_id)
    assert still.state is PurgeState.SCHEDULED
    await purges.cancel(purge_id)
    await status_when(purges, purge_id, lambda status: status.state is PurgeState.CANCELLED)
    assert lake.load_table(("soft", "taken")).metadata_location == newcomer.metadata_location
    assert s3.list(table.location()) == before


async def test_a_snapshot_purge_can_wait_and_be_undropped_without_its_catalog(
    catalog: SqlCatalog, purges: PurgeClient, s3: S3Store, stack: EmbeddedStack
) -> None:
    table = simple_table(catalog, ("soft",), "snapshot", appends=1)
    catalog.drop_table(("soft", "snapshot"))
    before = s3.list(table.location())
    purge_id = await purges.start(request_for(table, s3.properties, purge_after_seconds=WEEK))
    await status_when(purges, purge_id, lambda status: status.state is PurgeState.SCHEDULED)
    undropped = await purges.undrop(purge_id)
    assert undropped.state is PurgeState.UNDROPPED
    assert "register" in (undropped.undropped_note or "") and "yourself" in (undropped.undropped_note or "")
    assert s3.list(table.location()) == before
    code, stdout, stderr = await icepurge(stack, "purge", "watch", purge_id)
    assert code == EXIT_CODES[PurgeState.UNDROPPED] == 6
    assert stdout.startswith("UNDROPPED: nothing deleted"), stderr
