"""Pause, resume and the rate budget of a namespace purge reach its running table purges; while
paused, no table purge starts."""

from __future__ import annotations

import asyncio
from functools import partial

import pytest
from pyiceberg.catalog.sql import SqlCatalog

from icepurge.api.clients.errors import PurgeControlRejectedError
from icepurge.api.clients.temporal_client import PurgeClient
from icepurge.api.clients.temporal_namespace_client import namespace_request
from icepurge.contract.namespace_status import NamespacePurgeState, NamespacePurgeStatus
from icepurge.contract.states import PurgeState
from icepurge.contract.status import PurgeStatus
from tests.conftest import LAKE_CATALOG
from tests.namespace_trees import flat_namespace
from tests.purge_helpers import children_of, eventually
from tests.store import S3Store


async def _children(purges: PurgeClient, parent: str) -> list[PurgeStatus]:
    return [await purges.status(child) for child in await children_of(purges, parent)]


async def _soft_deleting(
    purges: PurgeClient, namespace: str, *, window: int, batch_tables: int | None = None, **options: float
) -> str:
    """Soft-deleted table purges wait SCHEDULED until expedited: the test decides when they delete."""
    return await purges.namespaces.start(
        namespace_request(
            LAKE_CATALOG,
            [namespace],
            requested_by="pytest",
            max_concurrent_tables=window,
            batch_tables=batch_tables,
            options={"purge_after_seconds": 3600, **options},
        )
    )


def _scheduled(count: int, status: NamespacePurgeStatus) -> bool:
    """`count` table purges running, each waiting SCHEDULED for its expedite."""
    return [table.state for table in status.running] == ["SCHEDULED"] * count


async def test_pause_resume_and_budget_reach_the_running_table_purges(
    lake: SqlCatalog, purges: PurgeClient, s3: S3Store
) -> None:
    tree = flat_namespace(lake, s3, ("steered",), 4)
    namespaces = purges.namespaces
    purge_id = await _soft_deleting(purges, "steered", window=2, batch_tables=0)

    await eventually(lambda: namespaces.status(purge_id), partial(_scheduled, 2))
    paused = await namespaces.pause(purge_id)
    assert paused.paused
    with pytest.raises(PurgeControlRejectedError, match="already paused"):
        await namespaces.pause(purge_id)
    budget = await namespaces.set_rate_budget(purge_id, 40)
    assert budget.bucket_requests_per_second == 40
    first = await _children(purges, purge_id)
    assert len(first) == 2
    for child in first:
        await eventually(
            partial(purges.status, child.purge_id),
            lambda status: status.paused and status.bucket_requests_per_second == 20,
        )
        await purges.expedite(child.purge_id)
    # Expedited, the table purges reach their deletes and hold there, paused.
    for child in first:
        await eventually(
            partial(purges.status, child.purge_id),
            lambda status: status.state is PurgeState.PAUSED,
        )
    await asyncio.sleep(1.5)
    assert len(await _children(purges, purge_id)) == 2, "no table purge starts while paused"
    assert all(s3.exists(uri) for files in tree.purged.values() for uri in files)

    await namespaces.resume(purge_id)

    def two_more_scheduled(status: NamespacePurgeStatus) -> bool:
        return status.tables_done == 2 and _scheduled(2, status)

    # Started after the budget changed, whether or not the run continued as new meanwhile (its
    # next run shares the budget among the two tables it has left), they take its share too.
    await eventually(lambda: namespaces.status(purge_id), two_more_scheduled)
    for table in (await namespaces.status(purge_id)).running:
        assert (await purges.status(table.purge_id)).bucket_requests_per_second == 20
        await purges.expedite(table.purge_id)
    status = (await namespaces.wait(purge_id)).status
    assert status.state is NamespacePurgeState.SUCCEEDED and status.tables_done == 4
    assert status.files.deleted == tree.files
    with pytest.raises(PurgeControlRejectedError):
        await namespaces.resume(purge_id)


async def test_a_namespace_purge_of_fewer_tables_than_its_window_shares_its_budget_among_them(
    lake: SqlCatalog, purges: PurgeClient, s3: S3Store
) -> None:
    """Three tables in a window of 16 take a third of the budget each, not a sixteenth."""
    tree = flat_namespace(lake, s3, ("shared",), 3)
    namespaces = purges.namespaces
    purge_id = await _soft_deleting(purges, "shared", window=16, bucket_requests_per_second=30)
    await eventually(lambda: namespaces.status(purge_id), partial(_scheduled, 3))
    children = await _children(purges, purge_id)
    assert sorted(child.bucket_requests_per_second or 0 for child in children) == [10, 10, 10]
    for child in children:
        await purges.expedite(child.purge_id)
    status = (await namespaces.wait(purge_id)).status
    assert status.state is NamespacePurgeState.SUCCEEDED and status.tables_done == 3
    assert status.files.deleted == tree.files
