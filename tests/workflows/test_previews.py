"""Every preview meets the guards the real run meets and says which refusals it would meet, and
its counts are the real run's: a dry run of a table (by name, by snapshot), of a sweep, of a
namespace (which tables would fail, which namespaces would be dropped)."""

from __future__ import annotations

import asyncio
import time

import pytest
from pyiceberg.catalog.sql import SqlCatalog
from pyiceberg.table import Table

from icepurge.api.clients.errors import PurgeFailedError
from icepurge.api.clients.temporal_client import PurgeClient
from icepurge.api.clients.temporal_namespace_client import namespace_request
from icepurge.contract.names import ERROR_LIVE_TABLE, PROTECTED_PROPERTY
from icepurge.contract.namespace_request import NamespacePurgeRequest
from icepurge.contract.namespace_status import NamespacePurgeState, NamespacePurgeStatus
from icepurge.contract.states import PurgeState
from icepurge.contract.status import GuardName, GuardOutcome, PurgeStatus
from icepurge.contract.sweep_steps import SweepOutcome
from icepurge.devstack.requests import request_for_table
from icepurge.workflows.table.table_lifecycle import PREVIEW_REFUSAL
from tests.conftest import LAKE_CATALOG
from tests.store import S3Store
from tests.tables import simple_table

SWEEP = {"sweep_location": True, "sweep_grace_seconds": 0}


def _live_table_guard(status: PurgeStatus) -> GuardOutcome:
    return next(guard for guard in status.guards if guard.guard is GuardName.LIVE_TABLE)


def _inside(lake: SqlCatalog, outer: Table, identifier: tuple[str, ...]) -> Table:
    """A live table whose location sits inside `outer`'s."""
    lake.create_namespace_if_not_exists(identifier[:-1])
    inner = lake.create_table(identifier, schema=outer.schema(), location=f"{outer.location()}/nested")
    inner.append(outer.scan().to_arrow())
    return inner


async def test_a_sweeps_dry_run_meets_the_refusal_the_real_sweep_meets(
    lake: SqlCatalog, purges: PurgeClient, s3: S3Store
) -> None:
    outer = simple_table(lake, ("preview_sweep",), "outer", appends=1)
    inner = _inside(lake, outer, ("preview_live", "inner"))
    inner_files = s3.list(inner.location())
    s3.put(f"{outer.location()}/data/aborted.parquet", b"never referenced")
    time.sleep(1.2)
    # The purge's own guard compares the identifier only: the sweep's looks at the whole catalog.
    options = {**SWEEP, "overlap_scope": "table"}
    rehearsal = await purges.purge_by_name(
        LAKE_CATALOG, ["preview_sweep"], "outer", requested_by="pytest", options={**options, "dry_run": True}
    )
    previewed = (await purges.wait(rehearsal)).status
    real = (
        await purges.wait(
            await purges.purge_by_name(
                LAKE_CATALOG, ["preview_sweep"], "outer", requested_by="pytest", options=options
            )
        )
    ).status
    for status in (previewed, real):
        assert status.state is PurgeState.SUCCEEDED, status
        assert status.sweep is not None and not status.sweep.applied, status.sweep
        assert status.sweep.swept == 0 and "preview_live.inner" in status.sweep.detail
    assert previewed.sweep is not None and previewed.sweep.detail.startswith(
        "the real sweep would be refused"
    )
    assert s3.list(inner.location()) == inner_files


async def test_a_dry_run_meets_the_live_table_guard_the_real_purge_meets(
    lake: SqlCatalog, purges: PurgeClient, s3: S3Store
) -> None:
    outer = simple_table(lake, ("preview_guard",), "outer", appends=1)
    inner = _inside(lake, outer, ("preview_guard", "inner"))
    files = s3.list(outer.location())
    rehearsal = await purges.purge_by_name(
        LAKE_CATALOG, ["preview_guard"], "outer", requested_by="pytest", options={"dry_run": True}
    )
    status = (await purges.wait(rehearsal)).status
    assert status.state is PurgeState.SUCCEEDED and status.dry_run
    guard = _live_table_guard(status)
    assert guard.applied and not guard.passed, guard
    assert guard.detail.startswith(PREVIEW_REFUSAL) and "preview_guard.inner" in guard.detail
    assert lake.table_exists(("preview_guard", "outer")) and s3.list(outer.location()) == files

    # The real purge is refused for the same reason.
    with_guard = await purges.purge_by_name(LAKE_CATALOG, ["preview_guard"], "outer", requested_by="pytest")
    with pytest.raises(PurgeFailedError) as refused:
        await purges.wait(with_guard)
    assert refused.value.error_type == ERROR_LIVE_TABLE
    assert guard.detail.removeprefix(PREVIEW_REFUSAL) in refused.value.reason
    assert s3.list(outer.location()) == files

    # A table alone: by name, the preview leaves out the entry the real purge drops first; by
    # snapshot of a table still in its catalog, the real purge would refuse, and so does the preview.
    alone = simple_table(lake, ("preview_guard",), "alone", appends=1)
    passed = await purges.purge_by_name(
        LAKE_CATALOG, ["preview_guard"], "alone", requested_by="pytest", options={"dry_run": True}
    )
    assert _live_table_guard((await purges.wait(passed)).status).passed
    snapshot = request_for_table(LAKE_CATALOG, alone, s3.properties, "pytest", dry_run=True)
    refused_guard = _live_table_guard((await purges.wait(await purges.start(snapshot))).status)
    assert refused_guard.applied and not refused_guard.passed
    assert "uses the purged metadata" in refused_guard.detail
    assert inner.location().startswith(outer.location())


def _counts(status: NamespacePurgeStatus) -> tuple[int, int, int, int, int]:
    return (
        status.tables_total,
        status.tables_done,
        status.tables_failed,
        status.tables_skipped,
        status.namespaces_dropped,
    )


async def test_a_namespace_dry_run_counts_what_the_real_run_does(
    lake: SqlCatalog, purges: PurgeClient, s3: S3Store
) -> None:
    """rehearse/{a/{plain, shadowed}, b/{locked (protected)}}, and elsewhere.inner live inside
    shadowed's location: shadowed would fail (LiveTable, once dropped), a would be dropped, b and
    the root would stay."""
    plain = simple_table(lake, ("rehearse", "a"), "plain", appends=1)
    shadowed = simple_table(lake, ("rehearse", "a"), "shadowed", appends=1)
    _inside(lake, shadowed, ("rehearse_elsewhere", "inner"))
    simple_table(lake, ("rehearse", "b"), "locked", appends=1, properties={PROTECTED_PROPERTY: "true"})
    before = s3.list(plain.location()) | s3.list(shadowed.location())
    options = {"overlap_scope": "catalog"}
    request = namespace_request(
        LAKE_CATALOG,
        ["rehearse"],
        requested_by="pytest",
        recursive=True,
        options={**options, "dry_run": True},
    )
    previewed = (await purges.namespaces.wait(await purges.namespaces.start(request))).status
    assert previewed.dry_run and previewed.state is NamespacePurgeState.SUCCEEDED_WITH_ERRORS
    assert [(failure.table, failure.error_type) for failure in previewed.failure_sample] == [
        (f"{LAKE_CATALOG}.rehearse.a.shadowed", ERROR_LIVE_TABLE)
    ]
    kept = {entry.name: entry.reason for entry in previewed.skipped_sample}
    assert kept[f"{LAKE_CATALOG}.rehearse.b"].startswith("would still hold rehearse.b.locked")
    # Nothing changed.
    assert lake.namespace_exists(("rehearse", "a")) and lake.table_exists(("rehearse", "a", "shadowed"))
    assert all(s3.exists(uri) for uri in before)

    real_request = namespace_request(
        LAKE_CATALOG, ["rehearse"], requested_by="pytest", recursive=True, options=options
    )
    real = (await purges.namespaces.wait(await purges.namespaces.start(real_request))).status
    assert _counts(previewed) == _counts(real) == (3, 1, 1, 1, 1)
    assert not lake.namespace_exists(("rehearse", "a"))
    assert lake.namespace_exists(("rehearse", "b")) and lake.namespace_exists(("rehearse",))


async def _sweeps_by_table(purges: PurgeClient, parent_id: str) -> dict[str, SweepOutcome]:
    """Each table purge's sweep outcome, by table name, of a namespace purge that closed."""
    await asyncio.sleep(1)  # listings are eventually consistent
    page = await purges.namespace_tables(parent_id, page_size=20)
    sweeps = {}
    for item in page.items:
        status = await purges.status(item.purge_id)
        assert status.sweep is not None, status
        sweeps[status.table] = status.sweep
    return sweeps


async def test_a_namespace_dry_runs_sweeps_are_the_real_runs_sweeps(
    lake: SqlCatalog, purges: PurgeClient, s3: S3Store
) -> None:
    """sweeptree.v2/{a/{orphaned, plain}, b/{deep/{shadowed}}}, purged from the level
    "sweeptree.v2" as one level (a SQL catalog, as SeaweedFS's, keeps it as two), and
    sweep_live.inner lives inside shadowed's location. The preview's guard at catalog scope leaves
    out each table's own entry, however its identifier is spelled (the real run drops it first):
    it would sweep orphaned's 4 old orphans, as the real run then does, and both refuse
    shadowed's sweep for sweep_live.inner."""
    orphaned = simple_table(lake, ("sweeptree", "v2", "a"), "orphaned", appends=1)
    simple_table(lake, ("sweeptree", "v2", "a"), "plain", appends=1)
    shadowed = simple_table(lake, ("sweeptree", "v2", "b", "deep"), "shadowed", appends=1)
    inner = _inside(lake, shadowed, ("sweep_live", "inner"))
    inner_files = s3.list(inner.location())
    orphans = {f"{orphaned.location()}/data/aborted-{index}.parquet" for index in range(4)}
    for orphan in orphans:
        s3.put(orphan, b"never referenced")
    time.sleep(1.2)

    def request(dry_run: bool) -> NamespacePurgeRequest:
        options = {**SWEEP, "dry_run": dry_run}
        return namespace_request(
            LAKE_CATALOG, ["sweeptree.v2"], requested_by="pytest", recursive=True, options=options
        )

    previewed = await purges.namespaces.start(request(dry_run=True))
    await purges.namespaces.wait(previewed)
    preview = await _sweeps_by_table(purges, previewed)
    assert all(s3.exists(orphan) for orphan in orphans)
    real_id = await purges.namespaces.start(request(dry_run=False))
    await purges.namespaces.wait(real_id)
    real = await _sweeps_by_table(purges, real_id)

    assert set(preview) == set(real) == {"orphaned", "plain", "shadowed"}
    for table in preview:
        assert (preview[table].applied, preview[table].swept) == (real[table].applied, real[table].swept), (
            table,
            preview[table],
            real[table],
        )
    assert preview["orphaned"].swept == 4 and not any(s3.exists(orphan) for orphan in orphans)
    assert not real["shadowed"].applied and "sweep_live.inner" in real["shadowed"].detail
    assert preview["shadowed"].detail.startswith("the real sweep would be refused")
    assert s3.list(inner.location()) == inner_files


async def test_a_sweeps_preview_leaves_out_the_tables_own_entry_however_its_namespace_is_spelled(
    lake: SqlCatalog, purges: PurgeClient, s3: S3Store
) -> None:
    """Purged by name as ["sweepdot.v2"], the table SQL lists as ("sweepdot", "v2", ...): the
    preview's catalog-scope guard met it under that spelling and took it for a live table of its
    own ("uses the purged metadata"), where the real run, which drops it first, sweeps."""
    orphaned = simple_table(lake, ("sweepdot", "v2"), "orphaned", appends=1)
    orphans = {f"{orphaned.location()}/data/aborted-{index}.parquet" for index in range(4)}
    for orphan in orphans:
        s3.put(orphan, b"never referenced")
    time.sleep(1.2)
    sweeps = []
    for dry_run in (True, False):
        purge_id = await purges.purge_by_name(
            LAKE_CATALOG,
            ["sweepdot.v2"],
            "orphaned",
            requested_by="pytest",
            options={**SWEEP, "dry_run": dry_run},
        )
        status = (await purges.wait(purge_id)).status
        assert status.state is PurgeState.SUCCEEDED and status.sweep is not None, status
        sweeps.append(status.sweep)
    previewed, real = sweeps
    assert (previewed.applied, previewed.swept) == (real.applied, real.swept) == (True, 4), sweeps
    assert not any(s3.exists(orphan) for orphan in orphans)
