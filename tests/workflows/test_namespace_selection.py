"""Namespace purges of the tables a selection matches, against the real SQLite catalog: name globs,
properties, the age of the last commit and an explicit list; what is left stays whole, is listed
with the condition it failed, and keeps its namespace; a dry run says exactly the same up front."""

from __future__ import annotations

import time

import httpx
from pyiceberg.catalog.sql import SqlCatalog
from pyiceberg.serializers import ToOutputFile
from pyiceberg.table import Table

from icepurge.api.clients.http_client import HttpPurgeClient
from icepurge.api.clients.temporal_namespace_client import namespace_request
from icepurge.contract.namespace_status import NamespacePurgeState, SkippedEntry
from icepurge.devstack.stack import EmbeddedStack
from tests.api_server import TOKENS, bearer
from tests.cli_runner import icepurge, icepurge_over_api
from tests.conftest import LAKE_CATALOG
from tests.store import S3Store
from tests.tables import simple_table

DAY_MS = 86_400_000


def _backdated(lake: SqlCatalog, table: Table, days: int) -> None:
    """The table's last commit `days` ago: its metadata rewritten with that time and registered in
    its place (the catalog's entry only: every file stays the table's)."""
    identifier = table.name()
    metadata = table.metadata.model_copy(update={"last_updated_ms": int(time.time() * 1000) - days * DAY_MS})
    location = f"{table.location()}/metadata/99999-backdated.metadata.json"
    ToOutputFile.table_metadata(metadata, table.io.new_output(location))
    lake.drop_table(identifier)
    lake.register_table(identifier, location)


def _files(s3: S3Store, table: Table) -> set[str]:
    return s3.list(table.location())


async def _all_skipped(client: HttpPurgeClient, purge_id: str) -> dict[str, str]:
    """Every skipped entry, read a page of two at a time."""
    entries: list[SkippedEntry] = []
    offset: int | None = 0
    while offset is not None:
        page = await client.namespaces.skipped(purge_id, offset, limit=2)
        entries += page.entries
        offset = page.next_offset
    return {entry.name: entry.reason for entry in entries}


async def test_globs_and_properties_purge_only_the_matching_tables_and_list_the_rest(
    lake: SqlCatalog, s3: S3Store, api_url: str
) -> None:
    tmp_1 = simple_table(lake, ("chosen",), "tmp_1", appends=1, properties={"team": "b"})
    tmp_keep = simple_table(lake, ("chosen",), "tmp_keep", appends=1, properties={"team": "b"})
    orders = simple_table(lake, ("chosen",), "orders", appends=1, properties={"team": "b"})
    eu_tmp = simple_table(lake, ("chosen", "eu"), "tmp_2", appends=1, properties={"team": "b"})
    eu_other = simple_table(lake, ("chosen", "eu"), "tmp_3", appends=1, properties={"team": "a"})
    kept_files = {table.name(): _files(s3, table) for table in (tmp_keep, orders, eu_other)}
    selection = {
        "names": ["chosen.tmp_*", "chosen.eu.*"],
        "exclude_names": ["*_keep"],
        "properties": ["team=b"],
    }
    refused = httpx.post(
        f"{api_url}/v1/catalogs/{LAKE_CATALOG}/namespace-purges",
        json={"namespace": ["chosen"], "selection": {"names": ["chosen.[tmp"]}},
        headers=bearer("lake-dropper"),
    )
    assert refused.status_code == 422 and "never closes" in refused.json()["detail"][0]["msg"]
    request = namespace_request(
        LAKE_CATALOG, ["chosen"], requested_by="pytest", recursive=True, selection=selection
    )
    async with HttpPurgeClient(api_url, TOKENS["lake-dropper"][0]) as client:
        purge_id = await client.namespaces.start(request)
        status = (await client.namespaces.wait(purge_id, poll_seconds=0.25)).status
        skipped = await _all_skipped(client, purge_id)
    assert status.state is NamespacePurgeState.SUCCEEDED, status
    assert status.selection is not None and status.selection.properties == ["team=b"]
    assert (status.tables_total, status.tables_done, status.tables_unselected) == (2, 2, 3)
    for purged in (tmp_1, eu_tmp):
        assert not lake.table_exists(purged.name()) and not _files(s3, purged)
    for kept, files in kept_files.items():
        assert lake.table_exists(kept) and files and all(s3.exists(uri) for uri in files)
    assert skipped == {
        "lake.chosen.tmp_keep": "unselected: its name matches the excluded *_keep",
        "lake.chosen.orders": "unselected: its name matches none of chosen.tmp_*, chosen.eu.*",
        "lake.chosen.eu.tmp_3": "unselected: property team is not 'b'",
    }
    # Namespaces that keep an unselected table stay, and say what they still hold.
    kept_namespaces = {
        entry.name: entry.reason for entry in status.skipped_sample if entry.kind == "namespace"
    }
    assert kept_namespaces["lake.chosen.eu"] == "still holds chosen.eu.tmp_3"
    assert lake.namespace_exists(("chosen", "eu"))


async def test_a_dry_run_by_age_says_what_it_would_purge_and_an_explicit_list_then_purges_it(
    lake: SqlCatalog, s3: S3Store, stack: EmbeddedStack, api_url: str
) -> None:
    old = simple_table(lake, ("aged",), "old", appends=1)
    _backdated(lake, old, days=3)
    fresh = simple_table(lake, ("aged",), "fresh", appends=1)
    before = {table.name(): _files(s3, table) for table in (old, fresh)}
    code, out, err = await icepurge(
        stack, "purge", "namespace", LAKE_CATALOG, "aged", "--older-than", "2d", "--dry-run"
    )
    assert code == 0, err
    rehearsal = out.strip()
    code, out, err = await icepurge(stack, "purge", "watch", rehearsal, "--interval", "0.3")
    assert code == 0, err
    assert out.startswith("SUCCEEDED (dry run): 1 of 1 tables would be purged"), out
    token = {"ICEPURGE_API_TOKEN": TOKENS["lake-dropper"][0]}
    code, out, err = await icepurge_over_api(api_url, "purge", "skipped", rehearsal, **token)
    assert code == 0, err
    assert "lake.aged.fresh" in out and "its last commit is within 2d" in out and "lake.aged.old" not in out
    code, out, err = await icepurge(stack, "purge", "tables", rehearsal)
    assert code == 0, err
    assert "lake.aged.old" in out and "lake.aged.fresh" not in out
    for table, files in before.items():
        assert lake.table_exists(table) and all(s3.exists(uri) for uri in files)

    code, out, err = await icepurge(
        stack, "purge", "namespace", LAKE_CATALOG, "aged", "--table", "aged.fresh", "--table", "aged.nope"
    )
    assert code == 0, err
    listed = out.strip()
    assert listed != rehearsal.removesuffix("-dry-run")
    code, out, err = await icepurge(stack, "purge", "watch", listed, "--interval", "0.3")
    assert code == 0, err
    assert out.startswith("SUCCEEDED: 1 of 1 tables purged"), out
    assert not lake.table_exists(("aged", "fresh")) and not any(
        s3.exists(uri) for uri in before[fresh.name()]
    )
    assert lake.table_exists(("aged", "old")) and all(s3.exists(uri) for uri in before[old.name()])
    async with HttpPurgeClient(api_url, TOKENS["lake-dropper"][0]) as client:
        status = await client.namespaces.status(listed)
        skipped = await _all_skipped(client, listed)
    assert skipped == {
        "lake.aged.old": "unselected: not in the listed tables",
        "lake.aged.nope": "unselected: listed, not found",
    }
    assert status.tables_unselected == 2 and status.namespaces_dropped == 0
    assert lake.namespace_exists(("aged",))
