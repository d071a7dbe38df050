"""Every page of the docs site in headless Chromium, served from 127.0.0.1: each renders (its
title, its navigation, its search box), every asset it asks for is there, and no request of the
page's leaves 127.0.0.1. Chromium's NetLog names what made each request (its traffic annotation):
the page's loads are those its loopback loads carry, and none of them may go anywhere else.
Chromium's own calls home (its clock, updater, accounts) go to a proxy that refuses them.
Skipped, with the reason, where no headless Chromium is installed (`make browser`)."""

from __future__ import annotations

import asyncio
import functools
import html
import re
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, SimpleHTTPRequestHandler
from pathlib import Path

import pytest
from mkdocs.commands.build import build
from mkdocs.config import load_config

from icepurge.devstack.loopback_http import loopback_http
from tests.browser import rendered_dom, requests_logged, require_browser
from tests.paths import ROOT

pytestmark = pytest.mark.browser

PAGES_AT_ONCE = 4
_TITLE = re.compile(r"<h1[^>]*>(.*?)</h1>", re.DOTALL)


class _Site(SimpleHTTPRequestHandler):
    answered: list[tuple[str, int]]

    def log_request(self, code: int | str = "-", size: int | str = "-") -> None:
        self.answered.append((self.path, int(code)))


class _Refusing(BaseHTTPRequestHandler):
    """Chromium's proxy for everything but loopback: nothing leaves the host."""

    def _refuse(self) -> None:
        self.send_error(403, "nothing leaves the host")

    do_CONNECT = do_GET = do_POST = do_HEAD = _refuse  # noqa: N815  # http.server's handler names

    def log_message(self, format: str, *args: object) -> None:
        return


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, str, list[tuple[str, int]]]]:
    directory = tmp_path_factory.mktemp("site")
    build(load_config(str(ROOT / "mkdocs.yml"), site_dir=str(directory)))
    answered: list[tuple[str, int]] = []
    handler = type("Site", (_Site,), {"answered": answered})
    with loopback_http(functools.partial(handler, directory=str(directory))) as url:  # type: ignore[arg-type]
        yield directory, url, answered


def _text(markup: str) -> str:
    return html.unescape(re.sub(r"<[^>]+>", "", markup)).replace("¶", "").strip()


async def test_every_page_renders_from_the_host_alone(
    site: tuple[Path, str, list[tuple[str, int]]], tmp_path: Path
) -> None:
    require_browser()
    directory, url, answered = site
    pages = sorted(
        path.relative_to(directory).as_posix()
        for path in directory.rglob("*.html")
        if path.name != "404.html"
    )
    with loopback_http(_Refusing) as proxy:
        limit = asyncio.Semaphore(PAGES_AT_ONCE)

        async def render(index: int, page: str) -> tuple[str, str, Path]:
            net_log = tmp_path / f"page-{index}.json"
            # Loopback goes direct whatever the proxy; every other host goes through it.
            flags = (f"--proxy-server={proxy}", f"--log-net-log={net_log}")
            async with limit:
                return page, await rendered_dom(f"{url}/{page}", budget_ms=5_000, flags=flags), net_log

        rendered = await asyncio.gather(*(render(index, page) for index, page in enumerate(pages)))
    off_host: list[str] = []
    for page, dom, net_log in rendered:
        built = (directory / page).read_text()
        title = _TITLE.search(built)
        assert title is not None, page
        assert _text(title.group(1)) in _text(dom), f"{page} did not render its title"
        assert 'class="md-nav' in dom and "md-search__input" in dom, f"{page} rendered no navigation"
        requests = requests_logged(net_log)
        own = {annotation for request, annotation in requests if request.startswith(f"{url}/")}
        assert own, f"{page}: the NetLog shows none of the page's loads"
        off_host += [
            f"{page}: {request}"
            for request, annotation in requests
            if annotation in own and not request.startswith(f"{url}/")
        ]
    missing = sorted({path for path, code in answered if code >= 400})
    assert not missing, f"the pages asked for what the site doesn't have: {missing}"
    assert any(path.startswith("/assets/javascripts/") for path, _ in answered), "no page ran its scripts"
    assert not off_host, f"pages asked for something off the host: {off_host}"
