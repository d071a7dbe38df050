"""Where planning cuts chunks and spills parts depends on the manifests alone, never on its pace:
an attempt resumed from its predecessor's record or checkpoint writes, under every name, what the
predecessor writes there. So the one write a cut-off attempt can still land past its fence (a
frozen process, thawed after its retry went on) writes what the retry writes too: no chunk of the
retry's is changed under it, no file hidden from it."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel
from pyiceberg.catalog.sql import SqlCatalog
from pyiceberg.io import load_file_io
from pyiceberg.table import Table

from icepurge.activities.plan import planner, reach_walk
from icepurge.activities.plan.manifest_reader import parse_manifest_entries
from icepurge.activities.plan.plan_model import (
    ContentChunk,
    ContentFile,
    Plan,
    PlanCheckpoint,
    content_chunk_uri,
    spill_part_uris,
)
from icepurge.activities.plan.planner import ChunkSizing, PlanBuild, ReadyChunks, build_plan
from icepurge.activities.plan.reach_walk import PartialReach, ReachSaves, WalkReading, reach
from icepurge.devstack.requests import request_for_table
from icepurge.state.state_store import StateStore
from tests.tables import many_files_table

# 12 manifests of 30 files: 360 entries, checkpointed every other manifest.
MANIFESTS, FILES = 12, 30


class _CrashError(Exception):
    """The attempt dies here."""


@pytest.fixture(scope="module")
def table(tmp_path_factory: pytest.TempPathFactory) -> Table:
    root = tmp_path_factory.mktemp("determinism")
    catalog = SqlCatalog("local", uri=f"sqlite:///{root / 'catalog.db'}", warehouse=root.as_uri())
    return many_files_table(catalog, ("d",), "t", manifests=MANIFESTS, files=FILES)


class _RacingClock:
    """A slow attempt's clock: ten seconds pass between any two readings."""

    def __init__(self) -> None:
        self.now = 0.0

    def monotonic(self) -> float:
        self.now += 10.0
        return self.now


def _slow(monkeypatch: pytest.MonkeyPatch) -> None:
    """The attempts that resume run slow: a plan timed by the clock would cut elsewhere."""
    monkeypatch.setattr(planner, "time", _RacingClock(), raising=False)


def _plan(table: Table, state: StateStore, sizing: ChunkSizing, **hooks: object) -> Plan:
    return build_plan(
        PlanBuild(
            purge_id="p",
            request=request_for_table("local", table, {}, "pytest"),
            io=load_file_io({}, table.metadata_location),
            state=state,
            plan_uri=state.uri("p", "run", "plan.json"),
            sizing=sizing,
            **hooks,  # type: ignore[arg-type]
        )
    )


def _chunks(state: StateStore, plan: Plan) -> list[list[str]]:
    found = []
    for index in range(len(plan.content_chunks)):
        raw = state.read(content_chunk_uri(state.uri("p", "run", "plan.json"), index))
        assert raw is not None
        found.append(ContentChunk.model_validate_json(raw).paths)
    return found


def test_early_chunks_resumed_from_any_record_are_the_ones_an_uninterrupted_attempt_cuts(
    table: Table, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Overlap from the first manifest: chunks are cut (and recorded) as manifests are read.
    sizing = ChunkSizing(target_files=40, readers=2, overlap_min_seconds=0, checkpoint_manifests=2)
    whole = StateStore((tmp_path / "whole").as_uri(), {})
    expected = _chunks(whole, _plan(table, whole, sizing))
    assert len(expected) > 4
    for dies_after in (1, 3, 5):
        state = StateStore((tmp_path / f"resumed-{dies_after}").as_uri(), {})
        heard: list[int] = []

        def announce(ready: ReadyChunks, heard: list[int] = heard, dies_after: int = dies_after) -> None:
            heard.append(ready.chunks)
            if len(heard) == dies_after:
                raise _CrashError

        with pytest.raises(_CrashError):
            _plan(table, state, sizing, announce=announce)
        with monkeypatch.context() as slow:
            _slow(slow)
            resumed = _plan(table, state, sizing)
        assert _chunks(state, resumed) == expected, dies_after


def test_spilled_plans_resumed_from_any_checkpoint_write_the_same_parts_and_chunks(
    table: Table, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A memory budget far below the table: buckets spill as planning reads, pending parts between.
    sizing = ChunkSizing(target_files=40, memory_files=60, readers=2, checkpoint_manifests=1)
    whole = StateStore((tmp_path / "whole").as_uri(), {})
    whole_plan = _plan(table, whole, sizing)
    expected = _chunks(whole, whole_plan)
    assert whole_plan.spill is not None and whole_plan.spill.parts > 3
    assert whole_plan.pending_parts > 3
    for dies_at in (2, 5, 9):
        state = StateStore((tmp_path / f"resumed-{dies_at}").as_uri(), {})
        saved: list[PlanCheckpoint] = []

        def heartbeat(
            checkpoint: PlanCheckpoint, saved: list[PlanCheckpoint] = saved, dies_at: int = dies_at
        ) -> None:
            if checkpoint.manifests_done and (not saved or saved[-1] != checkpoint):
                saved.append(checkpoint)
                if len(saved) == dies_at:
                    raise _CrashError

        with pytest.raises(_CrashError):
            _plan(table, state, sizing, heartbeat=heartbeat)
        with monkeypatch.context() as slow:
            _slow(slow)
            plan = _plan(table, state, sizing, checkpoint=saved[-1])
        assert plan.spill == whole_plan.spill
        assert plan.pending_parts == whole_plan.pending_parts
        assert _chunks(state, plan) == expected, dies_at
        parts = {path.as_uri() for path in (tmp_path / f"resumed-{dies_at}").rglob("spill/*.json")}
        assert parts <= set(spill_part_uris(state.uri("p", "run", "plan.json"), plan.spill))


class _DiesAfterWrites(StateStore):
    """A worker killed right after its n-th write of an object named `name`: no heartbeat of it
    ever arrives."""

    def __init__(self, location: str, name: str, writes: int) -> None:
        super().__init__(location, {})
        self.name = name
        self.writes_left = writes

    def write(self, uri: str, document: BaseModel | dict[str, Any], compress: bool = False) -> None:
        super().write(uri, document, compress)
        if uri.endswith("/" + self.name):
            self.writes_left -= 1
            if self.writes_left == 0:
                raise _CrashError


@pytest.mark.parametrize("memory_files", [100_000, 60], ids=["early chunks", "spilled"])
def test_a_retry_resumes_from_the_last_record_without_a_heartbeat(
    table: Table, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, memory_files: int
) -> None:
    """Workers dying seconds after each start never get a throttled heartbeat out: a retry reads
    the records beside the plan, reads on from the last one's manifest, and writes what an
    uninterrupted plan writes."""
    sizing = ChunkSizing(target_files=150, memory_files=memory_files, readers=2, checkpoint_manifests=2)
    whole = StateStore((tmp_path / "whole").as_uri(), {})
    whole_plan = _plan(table, whole, sizing)
    expected = _chunks(whole, whole_plan)
    assert whole_plan.pending_parts > 2
    for records in (1, 2, 4):
        location = (tmp_path / f"resumed-{records}").as_uri()
        with pytest.raises(_CrashError):
            _plan(table, _DiesAfterWrites(location, "emitted.json", records), sizing)
        state = StateStore(location, {})
        reads: list[str] = []
        with monkeypatch.context() as slow:
            _slow(slow)
            slow.setattr(planner, "parse_manifest_entries", _counting(reads))
            plan = _plan(table, state, sizing, retried=True)
        assert _chunks(state, plan) == expected, records
        assert plan.pending_parts == whole_plan.pending_parts
        assert len(reads) == MANIFESTS - 2 * records, "the retry read again what was recorded"


def _counting(reads: list[str]) -> Callable[[str, bytes], list[ContentFile]]:
    def counted(path: str, raw: bytes) -> list[ContentFile]:
        reads.append(path)
        return parse_manifest_entries(path, raw)

    return counted


def test_a_walk_through_a_crash_loop_moves_on_and_finds_what_an_uninterrupted_one_finds(
    table: Table, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each life saves once, after its first read, and dies: the next one goes on from there."""
    monkeypatch.setattr(reach_walk, "SAVE_READS", 1)
    request = request_for_table("local", table, {}, "pytest")
    io = load_file_io({}, table.metadata_location)
    whole = reach(io, table.metadata, request, WalkReading(2, lambda: None))
    assert len(whole.metadata) >= MANIFESTS
    location = tmp_path.as_uri()
    state = StateStore(location, {})
    uri = state.uri("partial.json")
    lives = 0
    while True:
        lives += 1
        raw = state.read(uri)
        resumed = PartialReach.model_validate_json(raw) if raw else None
        # A clock ten seconds on at every reading: no save waits for the last one's cost.
        saves = ReachSaves(
            _DiesAfterWrites(location, "partial.json", 1), uri, itertools.count(0, 10).__next__
        )
        try:
            found = reach(io, table.metadata, request, WalkReading(2, lambda: None, saves, resumed))
        except _CrashError:
            continue
        break
    assert lives > MANIFESTS
    assert found == whole
    assert list(found.manifests) == list(whole.manifests)
    assert list(found.metadata) == list(whole.metadata)
