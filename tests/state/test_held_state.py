"""A purge folder held in memory (icepurge.state.held_state) on a real local state location:
what is held never reaches the store, the report always does, a flush writes everything held,
and a folder that outgrows the bound flushes itself and writes through from then on."""

from __future__ import annotations

from pathlib import Path

import pytest

from icepurge.state import state_store
from icepurge.state.state_store import StateStore


def _store(tmp_path: Path) -> StateStore:
    return StateStore(f"file://{tmp_path}", {})


def _on_disk(tmp_path: Path) -> set[str]:
    return {str(path.relative_to(tmp_path)) for path in tmp_path.rglob("*") if path.is_file()}


def test_held_objects_stay_in_memory_and_travel_to_another_store(tmp_path: Path) -> None:
    state = _store(tmp_path)
    folder = state.uri("purge", "run")
    with state.holding(folder) as held:
        state.write(f"{folder}/plan.json", {"files": 13}, compress=True)
        state.write(f"{folder}/chunks/000000.json", {"done": True})
        state.write(f"{folder}/report.json", {"deleted": 13})
        state.delete(f"{folder}/chunks/000000.json")
        assert state.read(f"{folder}/plan.json") == b'{"files": 13}'
        assert state.read(f"{folder}/chunks/000000.json") is None
        state.write(state.uri("purge", "other", "plan.json"), {"elsewhere": True})
        carried = held.encoded()
    assert _on_disk(tmp_path) == {"purge/run/report.json", "purge/other/plan.json"}
    assert set(carried) == {"plan.json"}

    # The next activity, perhaps on another worker, starts from what the result carried.
    elsewhere = _store(tmp_path)
    with elsewhere.holding(folder, carried):
        assert elsewhere.read(f"{folder}/plan.json") == b'{"files": 13}'
        assert elsewhere.read(f"{folder}/report.json") == b'{"deleted": 13}'
        elsewhere.delete(f"{folder}/plan.json")
    assert elsewhere.read(f"{folder}/plan.json") is None
    assert _on_disk(tmp_path) == {"purge/run/report.json", "purge/other/plan.json"}


def test_a_flush_writes_what_is_held_and_later_writes_go_through(tmp_path: Path) -> None:
    state = _store(tmp_path)
    folder = state.uri("purge", "run")
    with state.holding(folder) as held:
        state.write(f"{folder}/context.json", {"gc": True})
        state.flush(held)
        assert held.flushed and not held.objects
        state.write(f"{folder}/plan.json", {"files": 2}, compress=True)
    assert _on_disk(tmp_path) == {"purge/run/context.json", "purge/run/plan.json"}
    assert state.read(f"{folder}/plan.json") == b'{"files": 2}'


def test_a_folder_past_the_bound_flushes_itself(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(state_store, "HOLD_LIMIT_BYTES", 100)
    state = _store(tmp_path)
    folder = state.uri("purge", "run")
    with state.holding(folder) as held:
        state.write(f"{folder}/content/000000.json", {"paths": ["a"] * 5})
        assert not held.flushed and _on_disk(tmp_path) == set()
        state.write(f"{folder}/content/000001.json", {"paths": ["b"] * 50})
        assert held.flushed
        assert _on_disk(tmp_path) == {"purge/run/content/000000.json", "purge/run/content/000001.json"}
        state.delete(f"{folder}/content/000000.json")
    assert _on_disk(tmp_path) == {"purge/run/content/000001.json"}
