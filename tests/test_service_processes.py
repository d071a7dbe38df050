"""The embedded stack's service processes cache their bytecode whatever the shell says: a worker's
sandbox imports the workflow modules again for every new workflow, and without cached bytecode
compiles them from source each time."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest

from icepurge.devstack.process import ServiceProcess


def test_a_service_caches_its_bytecode_when_the_shell_says_not_to(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")
    monkeypatch.setenv("ICEPURGE_PASSED_ON", "kept")
    log = tmp_path / "service.log"
    script = "import os, sys; print(sys.dont_write_bytecode, os.environ['ICEPURGE_PASSED_ON'])"
    service = ServiceProcess("bytecode", [sys.executable, "-c", script], log)
    service.start()
    for _ in range(600):
        if not service.running():
            break
        time.sleep(0.05)
    assert log.read_text().split() == ["False", "kept"]
