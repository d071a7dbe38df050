"""Pages as a person sees them: headless Chromium runs their scripts, then hands back the DOM."""

from __future__ import annotations

import asyncio
import json
import shutil
import tempfile
from pathlib import Path

import pytest

BROWSERS = ("chromium", "chromium-browser", "google-chrome")


def browser_binary() -> str | None:
    return next((found for name in BROWSERS if (found := shutil.which(name))), None)


def require_browser() -> str:
    found = browser_binary()
    if found is None:
        pytest.skip(
            "no headless Chromium on this machine: `make test` installs Debian's chromium where it "
            "runs as root (as CI does), `make browser` as root installs it"
        )
    return found


async def rendered_dom(url: str, budget_ms: int = 15_000, flags: tuple[str, ...] = ()) -> str:
    """The DOM once the page's scripts have run for `budget_ms` of virtual time (network waits
    included), or returned earlier when the page went idle. `flags`: Chromium's, added."""
    with tempfile.TemporaryDirectory(prefix="icepurge-chromium-") as profile:
        # No background networking: this machine's closed network refuses Chromium's own calls home.
        process = await asyncio.create_subprocess_exec(
            require_browser(),
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            f"--user-data-dir={profile}",
            f"--virtual-time-budget={budget_ms}",
            *flags,
            "--dump-dom",
            url,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        stdout, stderr = await asyncio.wait_for(process.communicate(), timeout=120)
    assert process.returncode == 0, stderr.decode()[-2000:]
    return stdout.decode()


def requests_logged(net_log: Path) -> list[tuple[str, int]]:
    """Every URL request in a Chromium NetLog (`--log-net-log`): its URL and its traffic
    annotation, which says what made it (the page's loader, a navigation, or Chromium's own
    services: its clock, updater, accounts)."""
    log = json.loads(net_log.read_text())
    alive = log["constants"]["logEventTypes"]["REQUEST_ALIVE"]
    return [
        (event["params"]["url"], event["params"]["traffic_annotation"])
        for event in log["events"]
        if event["type"] == alive and "url" in event.get("params", {})
    ]
