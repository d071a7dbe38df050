"""The tools cache (`make engines`, `make compose-config`, ...) rebuilds a tool when its inputs'
content changes, not their times. A fresh clone, as CI makes one, gives every file a new time; when
that rebuilt both PySparks and PyFlink from their sdists on every run, uv kept each build and the
disk filled (61 GiB). The Compose loader is the cheapest tool to build, so it stands for them all:
its rule and the others' take their inputs through the same content keys."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from tests.paths import ROOT

pytestmark = pytest.mark.skipif(
    not (shutil.which("make") and shutil.which("go")), reason="needs make and Go to build the Compose loader"
)


def _build(checkout: Path, cache: Path) -> int:
    """The loader's modification time in ns after `make compose-config` in `checkout`."""
    subprocess.run(
        ["make", "--no-print-directory", "compose-config", f"TOOLS_CACHE={cache}"],
        cwd=checkout,
        check=True,
        capture_output=True,
        timeout=300,
    )
    return (cache / "bin" / "composeconfig").stat().st_mtime_ns


def test_a_tool_is_rebuilt_when_its_inputs_change_and_not_when_only_their_times_do(tmp_path: Path) -> None:
    checkout = tmp_path / "checkout"
    checkout.mkdir()
    shutil.copy(ROOT / "Makefile", checkout)
    sources = checkout / "tools" / "composeconfig"
    shutil.copytree(ROOT / "tools" / "composeconfig", sources)
    cache = tmp_path / "cache"
    built = _build(checkout, cache)

    later = time.time() + 60
    for source in sources.iterdir():
        os.utime(source, (later, later))
    assert _build(checkout, cache) == built, "a checkout that only moved the inputs' times rebuilt the tool"

    with (sources / "main.go").open("a") as main:
        main.write("\n// an edit\n")
    assert _build(checkout, cache) != built, "an edit to the tool's source did not rebuild it"
