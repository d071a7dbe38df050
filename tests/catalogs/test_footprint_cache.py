"""The guard's footprint cache holds what it answers for and no more: a long-lived worker guards
tables without end, and each one it ever saw must not stay in memory."""

from __future__ import annotations

import pytest

from icepurge.catalogs import live_tables
from icepurge.catalogs.live_tables import FootprintCache
from icepurge.catalogs.location_index import Footprint


def _footprint(index: int) -> Footprint:
    location = f"s3://lake/wide/t{index:06d}"
    return Footprint(("wide", f"t{index:06d}"), f"{location}/metadata/00001.metadata.json", (location,))


def test_entries_past_their_time_leave_as_new_ones_come() -> None:
    clock = [0.0]
    cache = FootprintCache(ttl_seconds=10, clock=lambda: clock[0])
    for index in range(100):
        cache.put("lake", _footprint(index).identifier, _footprint(index))
    clock[0] = 11.0
    cache.put("lake", _footprint(100).identifier, _footprint(100))
    assert len(cache) == 1
    assert cache.get("lake", _footprint(100).identifier) == (True, _footprint(100))
    assert cache.get("lake", _footprint(0).identifier) == (False, None)


def test_the_entries_by_table_are_bounded_whatever_their_time(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(live_tables, "_BY_TABLE_AT_MOST", 50)
    cache = FootprintCache(ttl_seconds=3600)
    for index in range(120):
        cache.put("lake", _footprint(index).identifier, _footprint(index))
    assert len(cache) == 50
    assert cache.get("lake", _footprint(119).identifier) == (True, _footprint(119))
    assert cache.get("lake", _footprint(0).identifier) == (False, None)
