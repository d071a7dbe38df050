"""A test session's state folder goes when the session passed, and stays when it failed or when
the operator named it."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.state_dirs import STATE_DIR_VARIABLE, session_state_dir


def _used(root: Path) -> None:
    (root / "stack" / "logs").mkdir(parents=True)
    (root / "stack" / "logs" / "temporal.log").write_text("started")


def test_a_passing_session_leaves_no_state_behind(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(STATE_DIR_VARIABLE, raising=False)
    with session_state_dir(lambda: 0) as root:
        _used(root)
    assert not root.exists()


def test_a_failed_session_keeps_its_state_for_its_logs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(STATE_DIR_VARIABLE, raising=False)
    with session_state_dir(lambda: 1) as root:
        _used(root)
    assert (root / "stack" / "logs" / "temporal.log").read_text() == "started"
    shutil.rmtree(root)


def test_a_named_state_dir_is_kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(STATE_DIR_VARIABLE, str(tmp_path / "kept"))
    with session_state_dir(lambda: 0) as root:
        _used(root)
    assert root == tmp_path / "kept"
    assert (root / "stack" / "logs" / "temporal.log").exists()
