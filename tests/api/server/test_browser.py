"""The browser tier: /docs and /redoc render every operation with no network but loopback, and
the Temporal Web UI shows a purge's summary and details decoded through the codec endpoint.
Skipped, with the reason, where no headless Chromium is installed (`make browser`)."""

from __future__ import annotations

import html
import os
import re
import shutil
from urllib.parse import unquote

import httpx
import pytest
from pyiceberg.catalog.sql import SqlCatalog
from temporalio.client import Client

from icepurge.api.clients.temporal_client import PurgeClient
from icepurge.api.server.settings import ApiSettings
from icepurge.devstack.api_server import serve_api
from icepurge.devstack.stack import EmbeddedStack
from tests.browser import browser_binary, rendered_dom, require_browser
from tests.purge_helpers import request_for
from tests.store import S3Store
from tests.tables import simple_table

pytestmark = pytest.mark.browser


def _operations(api_url: str) -> dict[str, str]:
    """operationId: summary, for every operation the API publishes."""
    spec = httpx.get(f"{api_url}/openapi.json").json()
    return {
        operation["operationId"]: operation["summary"]
        for path in spec["paths"].values()
        for operation in path.values()
    }


def test_the_tier_has_a_browser_wherever_make_test_can_install_one() -> None:
    """`make test` installs Debian's chromium as root with apt-get (CI): there, the tier must run,
    not skip."""
    if os.geteuid() != 0 or shutil.which("apt-get") is None:
        pytest.skip("not root with apt-get: `make test` installs no browser here")
    assert browser_binary() is not None, "make test (browser-for-tests) should have installed chromium"


async def test_swagger_ui_renders_every_operation_from_local_assets(api_url: str) -> None:
    require_browser()
    page = httpx.get(f"{api_url}/docs").text
    assets = re.findall(r'(?:src|href)=["\']([^"\']+)["\']', page)
    assert assets
    assert all(asset.startswith("/") for asset in assets), assets
    operations = _operations(api_url)
    dom = await rendered_dom(f"{api_url}/docs")
    blocks = [block for block in re.findall(r'id="operations-([^"]+)"', dom) if not block.startswith("tag-")]
    assert len(blocks) == len(operations)
    assert all(any(block.endswith(f"-{name}") for block in blocks) for name in operations), blocks
    assert dom.count('class="opblock opblock-') == len(operations)


async def test_redoc_renders_every_operation_from_local_assets(api_url: str) -> None:
    require_browser()
    page = httpx.get(f"{api_url}/redoc").text
    assert all(asset.startswith("/") for asset in re.findall(r'src=["\']([^"\']+)["\']', page))
    dom = html.unescape(await rendered_dom(f"{api_url}/redoc"))
    missing = [summary for summary in _operations(api_url).values() if summary not in dom]
    assert not missing


async def test_the_web_ui_shows_a_purge_summary_and_details_decoded_by_the_codec(
    catalog: SqlCatalog,
    purges: PurgeClient,
    temporal_client: Client,
    s3: S3Store,
    stack: EmbeddedStack,
    api_settings: ApiSettings,
) -> None:
    require_browser()
    table = simple_table(catalog, ("browser",), "shown", appends=2)
    purge_id = await purges.start(request_for(table, s3.properties))
    final = await purges.wait(purge_id)
    handle = temporal_client.get_workflow_handle(purge_id)
    run_id = (await handle.describe()).run_id
    # The metadata is sealed in history: only the codec endpoint can show it.
    history = [event async for event in handle.fetch_history_events()]
    summary_payload = history[0].user_metadata.summary
    assert summary_payload.metadata["encoding"] == b"binary/encrypted"

    ui = f"http://127.0.0.1:{stack.ports.temporal_ui}"
    # The UI was told the codec endpoint is on the stack's API port; the browser calls it.
    codec_api = api_settings.model_copy(
        update={"api_auth_file": None, "api_insecure_dev": True, "api_cors_origins": [ui]}
    )
    with serve_api(codec_api, port=stack.ports.api):
        listing = await rendered_dom(f"{ui}/namespaces/default/workflows")
        dom = await rendered_dom(f"{ui}/namespaces/default/workflows/{purge_id}/{run_id}/user-metadata")
        sources = [html.unescape(source) for source in re.findall(r'<iframe[^>]*src="([^"]+)"', dom)]
        assert any("purge tests.browser.shown" in unquote(source) for source in sources), sources
        details = next(source for source in sources if "| files |" in unquote(source))
        files = f"| files | {final.status.files_done:,} / {final.status.files_total:,} |"
        assert files in unquote(details)
        rendered = await rendered_dom(ui + details)
    assert purge_id in listing
    assert "<table" in rendered
    assert re.search(r"<th[^>]*>\s*progress\s*</th>", rendered)
    assert re.search(r"<td[^>]*>\s*files\s*</td>", rendered)
