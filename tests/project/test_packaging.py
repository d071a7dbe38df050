"""The wheel ships the service only: the embedded stack and the S3 fault proxy stay in the checkout
(`make run`, the tests, the benches), where the editable install still imports them."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

from tests.paths import ROOT


def test_the_wheel_holds_the_service_and_not_the_embedded_stack(tmp_path: Path) -> None:
    uv = Path(sys.executable).parent / "uv"
    # From the sdist, as an index would build it: nothing left over in the checkout's build/.
    subprocess.run([str(uv), "build", "--out-dir", str(tmp_path), "-q"], cwd=ROOT, check=True)
    (wheel,) = tmp_path.glob("icepurge-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    modules = {name for name in names if name.startswith("icepurge/")}
    assert not [name for name in modules if name.startswith("icepurge/devstack/")]
    for needed in (
        "icepurge/worker/run.py",
        "icepurge/api/cli/main.py",
        "icepurge/catalogs/registry.py",
        "icepurge/activities/delete/engine.py",
        "icepurge/state/state_store.py",
        "icepurge/workflows/table/purge_table.py",
    ):
        assert needed in modules
    entry_points = next(name for name in names if name.endswith(".dist-info/entry_points.txt"))
    assert "icepurge = icepurge.api.cli.main:main" in zipfile.ZipFile(wheel).read(entry_points).decode()
