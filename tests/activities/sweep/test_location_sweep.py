"""The location sweep on the real stack: files no metadata file knew are swept when old enough,
a file written after the purge started is kept, a live table inside the location stops the
sweep, a dry run lists exactly what would go, and a worker killed mid-sweep loses nothing."""

from __future__ import annotations

import asyncio
import json
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from pyiceberg.catalog.sql import SqlCatalog
from temporalio.client import Client

from icepurge.api.clients.temporal_client import PurgeClient
from icepurge.contract.states import PurgeState
from icepurge.contract.validation import by_name_request
from icepurge.devstack.s3_proxy import s3_proxy, through_proxy
from icepurge.devstack.stack import EmbeddedStack
from tests.conftest import LAKE_CATALOG
from tests.purge_helpers import status_when
from tests.store import S3Store
from tests.tables import simple_table

SWEEP = {"sweep_location": True, "sweep_grace_seconds": 0}


def _plant(s3: S3Store, location: str, names: list[str]) -> set[str]:
    planted = {f"{location}/{name}" for name in names}
    with ThreadPoolExecutor(16) as pool:
        list(pool.map(lambda uri: s3.put(uri, b"never referenced"), planted))
    return planted


def _swept_listing(s3: S3Store, listing: str) -> set[str]:
    pages = sorted(s3.list(listing))
    return {uri for page in pages for uri in json.loads(s3.read(page))["objects"]}


async def test_the_sweep_takes_old_unreferenced_files_and_keeps_a_newer_one(
    lake: SqlCatalog, purges: PurgeClient, s3: S3Store
) -> None:
    table = simple_table(lake, ("swept",), "t", appends=2)
    location = table.location()
    orphans = _plant(
        s3, location, ["data/aborted-1.parquet", "data/c=x/aborted-2.parquet", "metadata/torn.json"]
    )
    # Listing times have one-second resolution: the orphans must predate the purge's start.
    time.sleep(1.2)
    purge_id = await purges.purge_by_name(
        LAKE_CATALOG, ["swept"], "t", requested_by="pytest", options={**SWEEP, "purge_after_seconds": 3600}
    )
    await status_when(purges, purge_id, lambda status: status.state is PurgeState.SCHEDULED)
    late = _plant(s3, location, ["data/late-writer.parquet"])
    await purges.expedite(purge_id)
    status = (await purges.wait(purge_id)).status
    assert status.state is PurgeState.SUCCEEDED
    sweep = status.sweep
    assert sweep is not None and sweep.applied, sweep
    assert (sweep.swept, sweep.kept_recent, sweep.failed) == (3, 1, 0)
    assert sweep.by_prefix == {location: 3}
    assert s3.list(location) == late
    assert sweep.listing_location is not None
    assert _swept_listing(s3, sweep.listing_location) == orphans
    # The sweep is counted apart: the planned files' counts add up as before.
    assert status.counts.total().deleted == status.planned.files


async def test_a_dry_run_lists_exactly_what_the_sweep_would_take(
    lake: SqlCatalog, purges: PurgeClient, s3: S3Store
) -> None:
    table = simple_table(lake, ("swept",), "rehearsed", appends=2)
    orphans = _plant(s3, table.location(), ["data/aborted.parquet", "stray.txt"])
    before = s3.list(table.location())
    time.sleep(1.2)
    purge_id = await purges.purge_by_name(
        LAKE_CATALOG, ["swept"], "rehearsed", requested_by="pytest", options={**SWEEP, "dry_run": True}
    )
    status = (await purges.wait(purge_id)).status
    sweep = status.sweep
    assert sweep is not None and sweep.applied and sweep.swept == 2
    assert sweep.detail.startswith("would sweep 2 objects")
    assert sweep.listing_location is not None
    assert _swept_listing(s3, sweep.listing_location) == orphans
    assert s3.list(table.location()) == before
    assert lake.table_exists(("swept", "rehearsed"))


async def test_a_live_table_inside_the_location_stops_the_sweep(
    lake: SqlCatalog, purges: PurgeClient, s3: S3Store
) -> None:
    outer = simple_table(lake, ("swept",), "outer", appends=1)
    lake.create_namespace_if_not_exists(("swept_live",))
    inner = lake.create_table(
        ("swept_live", "inner"), schema=outer.schema(), location=f"{outer.location()}/nested-inner"
    )
    inner.append(outer.scan().to_arrow())
    inner_files = s3.list(inner.location())
    orphan = _plant(s3, outer.location(), ["data/aborted.parquet"])
    time.sleep(1.2)
    # The purge itself only compares the table's own identifier: the sweep's guard looks at the
    # whole catalog.
    purge_id = await purges.purge_by_name(
        LAKE_CATALOG, ["swept"], "outer", requested_by="pytest", options={**SWEEP, "overlap_scope": "table"}
    )
    status = (await purges.wait(purge_id)).status
    assert status.state is PurgeState.SUCCEEDED
    sweep = status.sweep
    assert sweep is not None and not sweep.applied and sweep.swept == 0
    assert "refused" in sweep.detail and "swept_live.inner" in sweep.detail
    assert s3.list(inner.location()) == inner_files
    assert orphan <= s3.list(outer.location())


async def test_a_sweep_without_a_known_catalog_refuses_and_says_so(
    stack: EmbeddedStack, purges: PurgeClient, s3: S3Store
) -> None:
    unknown = stack.catalog("tests")
    table = simple_table(unknown, ("swept",), "unknown", appends=1)
    orphan = _plant(s3, table.location(), ["data/aborted.parquet"])
    request: dict[str, Any] = {
        "catalog": "tests",
        "namespace": ["swept"],
        "table": "unknown",
        "metadata_location": table.metadata_location,
        "file_io_properties": s3.properties,
        "requested_by": "pytest",
        "options": SWEEP,
    }
    status = (await purges.wait(await purges.start(request))).status
    assert status.sweep is not None and not status.sweep.applied
    assert "no catalog to check" in status.sweep.detail
    assert s3.list(table.location()) == orphan


async def test_a_worker_killed_mid_sweep_resumes_from_its_listing(
    lake: SqlCatalog, temporal_client: Client, s3: S3Store, stack: EmbeddedStack
) -> None:
    table = simple_table(lake, ("swept",), "killed", appends=1)
    orphans = _plant(s3, table.location(), [f"data/aborted-{index:04d}.parquet" for index in range(2500)])
    time.sleep(1.2)
    queue = "icepurge-sweep-crash"
    purges = PurgeClient(temporal_client, queue)
    with s3_proxy(stack.ports.s3) as (port, faults):
        properties = through_proxy(s3.properties, port)
        faults.delete_delay = 1.0
        worker = stack.worker_process("sweep-worker-0", ICEPURGE_TASK_QUEUE=queue)
        worker.start()
        try:
            request = by_name_request(LAKE_CATALOG, ["swept"], "killed", requested_by="pytest", options=SWEEP)
            purge_id = await purges.start(request.model_copy(update={"file_io_properties": properties}))
            await status_when(purges, purge_id, lambda status: status.state is PurgeState.SWEEPING)
            await faults.deletes_reached(faults.delete_requests + 1)
            worker.kill()
            faults.delete_delay = 0
            worker = stack.worker_process("sweep-worker-1", ICEPURGE_TASK_QUEUE=queue)
            worker.start()
            status = (await asyncio.wait_for(purges.wait(purge_id), timeout=180)).status
        finally:
            worker.stop()
    sweep = status.sweep
    assert sweep is not None and sweep.applied
    assert (sweep.swept, sweep.failed) == (len(orphans), 0)
    assert s3.list(table.location()) == set()
    assert sweep.listing_location is not None
    assert _swept_listing(s3, sweep.listing_location) == orphans
