"""Namespace purges through the HTTP API (the drop role, the aggregate status, the table purges a
page at a time) and the icepurge CLI (start, watch with its two bars, tables, status)."""

from __future__ import annotations

import asyncio
import json

import httpx
import pytest
from pyiceberg.catalog.sql import SqlCatalog

from icepurge.api.clients.errors import PurgeAccessDeniedError
from icepurge.api.clients.http_client import HttpPurgeClient
from icepurge.api.clients.temporal_namespace_client import namespace_request
from icepurge.contract.namespace_status import NamespacePurgeState
from icepurge.contract.states import PurgeState
from icepurge.devstack.stack import EmbeddedStack
from tests.api_server import TOKENS, bearer
from tests.cli_runner import icepurge
from tests.conftest import LAKE_CATALOG
from tests.namespace_trees import flat_namespace
from tests.store import S3Store


async def test_a_namespace_purge_over_http_needs_the_drop_role_and_lists_its_tables(
    lake: SqlCatalog, s3: S3Store, api_url: str
) -> None:
    tree = flat_namespace(lake, s3, ("http_ns",), 3)
    request = namespace_request(
        LAKE_CATALOG, ["http_ns"], requested_by="someone", max_concurrent_tables=2, batch_tables=0
    )
    async with HttpPurgeClient(api_url, TOKENS["lake-starter"][0]) as starter:
        with pytest.raises(PurgeAccessDeniedError, match="may not drop") as denied:
            await starter.namespaces.start(request)
        assert denied.value.status_code == 403
    whole = httpx.post(
        f"{api_url}/v1/catalogs/{LAKE_CATALOG}/namespace-purges",
        json={"namespace": []},
        headers=bearer("lake-dropper"),
    )
    assert whole.status_code == 422 and "confirm" in whole.text
    # Past the service's bound on work units at once (ICEPURGE_MAX_CONCURRENT_UNITS here: 512).
    greedy = httpx.post(
        f"{api_url}/v1/catalogs/{LAKE_CATALOG}/namespace-purges",
        json={"namespace": ["http_ns"], "max_concurrent_tables": 513},
        headers=bearer("lake-dropper"),
    )
    assert greedy.status_code == 422, greedy.text
    assert "ICEPURGE_MAX_CONCURRENT_UNITS" in greedy.text and "513" in greedy.text
    async with HttpPurgeClient(api_url, TOKENS["lake-dropper"][0]) as dropper:
        purge_id = await dropper.namespaces.start(request)
        status = (await dropper.namespaces.wait(purge_id, poll_seconds=0.25)).status
        page = await dropper.namespace_tables(purge_id, page_size=2)
        rest = await dropper.namespace_tables(purge_id, page_size=2, page_token=page.next_page_token)
    assert status.state is NamespacePurgeState.SUCCEEDED
    assert status.requested_by == "someone" and status.tables_done == 3
    assert len(page.items) == 2 and len(rest.items) == 1 and rest.next_page_token is None
    assert {item.table for item in page.items + rest.items} == {"t000", "t001", "t002"}
    assert all(item.state == PurgeState.SUCCEEDED.value for item in page.items + rest.items)
    assert all(not lake.table_exists(identifier) for identifier in tree.purged)


async def test_the_cli_starts_watches_and_lists_a_namespace_purge(
    lake: SqlCatalog, s3: S3Store, stack: EmbeddedStack
) -> None:
    tree = flat_namespace(lake, s3, ("cli_ns", "inner"), 2)
    code, out, err = await icepurge(
        stack, "purge", "namespace", LAKE_CATALOG, "cli_ns", "--recursive", "--batch-tables", "0"
    )
    assert code == 0, err
    purge_id = out.strip()
    code, out, err = await icepurge(stack, "purge", "watch", purge_id, "--interval", "0.3")
    assert code == 0, err
    # The outcome on stdout, the bars on stderr.
    assert out.startswith("SUCCEEDED: 2 of 2 tables purged, 0 skipped, 0 failed") and "tables" in err
    # SQLite catalogs hold nested levels flat: cli_ns was never an entry of its own.
    assert f"{tree.files} files deleted, namespaces dropped: 1" in out
    assert not lake.namespace_exists(("cli_ns",))
    code, out, err = await icepurge(stack, "purge", "tables", purge_id)
    assert code == 0, err
    assert "lake.cli_ns.inner.t000" in out and "lake.cli_ns.inner.t001" in out
    code, out, _ = await icepurge(stack, "purge", "status", purge_id)
    assert json.loads(out)["tables_done"] == 2
    # `purge list` shows namespace purges beside table purges, each row saying which it is.
    listed = await eventually_listed(stack, purge_id, "--catalog", LAKE_CATALOG, "--limit", "1000")
    rows = [[cell.strip() for cell in line.split("│")[1:-1]] for line in listed.splitlines() if "│" in line]
    assert ["namespace", "SUCCEEDED", "lake.cli_ns"] in [row[:3] for row in rows], listed
    assert ["table", "SUCCEEDED", "lake.cli_ns.inner.t000"] in [row[:3] for row in rows], listed
    namespaces_only = await eventually_listed(stack, purge_id, "--kind", "namespace", "--limit", "1000")
    assert "lake.cli_ns.inner.t000" not in namespaces_only
    _, tables_only, _ = await icepurge(stack, "purge", "list", "--kind", "table", "--limit", "1000")
    assert purge_id not in tables_only
    code, _, err = await icepurge(stack, "purge", "namespace", LAKE_CATALOG, "")
    assert code == 2 and "confirm" in err


async def eventually_listed(stack: EmbeddedStack, purge_id: str, *filters: str) -> str:
    """`purge list` once visibility shows the purge (it is eventually consistent)."""
    for _ in range(50):
        code, out, err = await icepurge(stack, "purge", "list", *filters)
        assert code == 0, err
        if purge_id in out:
            return out
        await asyncio.sleep(0.2)
    raise AssertionError(f"{purge_id} never listed with {filters}")
