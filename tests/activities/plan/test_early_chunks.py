"""Chunks handed out while planning reads manifests: every distinct file in exactly one chunk,
announced only once recorded, and never rewritten by an attempt that resumes after a crash."""

from __future__ import annotations

from pathlib import Path

import pytest

from icepurge.activities.plan.chunk_output import ChunkOutput
from icepurge.activities.plan.early_chunks import DECODED_ENTRIES_PER_SECOND, EarlyChunks, EarlyPacing
from icepurge.activities.plan.plan_model import (
    ContentChunk,
    ContentFile,
    PlanCheckpoint,
    content_chunk_uri,
    emitted_uri,
)
from icepurge.contract.counts import Category
from icepurge.state.state_store import StateStore


def _listing(start: int, count: int) -> list[ContentFile]:
    return [
        ContentFile(f"s3://b/t/data/{index:05d}.parquet", Category.DATA_FILES, index)
        for index in range(start, start + count)
    ]


# Overlapping as rewrites do: 300 distinct files in 700 listings.
MANIFESTS = [_listing(0, 100), _listing(50, 150), _listing(0, 200), _listing(150, 150), _listing(100, 100)]


def _chunk(state: StateStore, plan_uri: str, index: int) -> list[str]:
    raw = state.read(content_chunk_uri(plan_uri, index))
    assert raw is not None
    return ContentChunk.model_validate_json(raw).paths


def _recorded(state: StateStore, plan_uri: str) -> PlanCheckpoint:
    raw = state.read(emitted_uri(plan_uri))
    assert raw is not None
    return PlanCheckpoint.model_validate_json(raw)


def _cutter(state: StateStore, plan_uri: str, announced: list[int]) -> EarlyChunks:
    def announce(ready: int) -> None:
        # What is announced may start deleting: it must already be in the record.
        assert _recorded(state, plan_uri).chunks_emitted >= ready
        announced.append(ready)

    return EarlyChunks(ChunkOutput(state, plan_uri, lambda: None), chunk_files=70, announce=announce)


def _read(cutter: EarlyChunks, manifests: range, stop_after: int | None = None) -> None:
    for index in manifests:
        cutter.add(MANIFESTS[index])
        cutter.boundary(index + 1, [], due=False)
        if index == stop_after:
            return


def test_chunks_are_cut_as_manifests_arrive_and_hold_each_file_once(tmp_path: Path) -> None:
    state = StateStore(tmp_path.as_uri(), {})
    plan_uri = state.uri("purge", "run", "plan.json")
    announced: list[int] = []
    cutter = _cutter(state, plan_uri, announced)

    cutter.add(MANIFESTS[0])
    cutter.boundary(1, [], due=False)
    assert announced == [1], "100 new files after the first manifest: one chunk (up to 1.5 x 70)"
    _read(cutter, range(1, len(MANIFESTS)))
    summary = cutter.finish()

    paths = [path for index in range(len(summary.chunk_sizes)) for path in _chunk(state, plan_uri, index)]
    assert sorted(paths) == sorted({file.path for file in _listing(0, 300)})
    assert len(paths) == len(set(paths)) == sum(summary.chunk_sizes) == 300
    assert max(summary.chunk_sizes) <= 105
    assert summary.by_category == {Category.DATA_FILES: 300}
    assert announced == sorted(announced) and announced[-1] == len(summary.chunk_sizes)


def test_a_resumed_attempt_keeps_every_recorded_chunk_and_adds_no_file_twice(tmp_path: Path) -> None:
    state = StateStore(tmp_path.as_uri(), {})
    plan_uri = state.uri("purge", "run", "plan.json")
    first: list[int] = []
    crashed = _cutter(state, plan_uri, first)
    _read(crashed, range(len(MANIFESTS)), stop_after=2)
    recorded = _recorded(state, plan_uri)
    # Manifest 2 lists no new file: the record is still the one cut after manifest 1.
    assert recorded.manifests_done == 2 and recorded.chunks_emitted == first[-1] == 2
    started = {index: _chunk(state, plan_uri, index) for index in range(recorded.chunks_emitted)}
    # The crashed attempt read one more manifest and wrote a chunk it never recorded.
    crashed.add(MANIFESTS[3])
    state.write(content_chunk_uri(plan_uri, recorded.chunks_emitted), ContentChunk.of(_listing(200, 5)))

    again: list[int] = []
    resumed = _cutter(state, plan_uri, again)
    assert resumed.resumed == recorded
    _read(resumed, range(resumed.resumed.manifests_done, len(MANIFESTS)))
    summary = resumed.finish()

    for index, paths in started.items():
        assert _chunk(state, plan_uri, index) == paths, f"chunk {index} may be deleting: never rewritten"
    paths = [path for index in range(len(summary.chunk_sizes)) for path in _chunk(state, plan_uri, index)]
    assert len(paths) == len(set(paths)) == 300
    assert summary.by_category == {Category.DATA_FILES: 300}
    assert again and again[0] > recorded.chunks_emitted


def test_what_is_pending_is_cut_in_even_pieces_without_slivers(tmp_path: Path) -> None:
    state = StateStore(tmp_path.as_uri(), {})
    plan_uri = state.uri("purge", "run", "plan.json")
    cutter = _cutter(state, plan_uri, [])
    cutter.add(_listing(0, 71))
    cutter.boundary(1, [], due=False)
    cutter.add(_listing(71, 160))
    cutter.boundary(2, [], due=False)

    assert cutter.finish().chunk_sizes == [71, 80, 80]


def test_the_first_chunk_goes_at_a_quarter_of_a_chunk_the_next_at_a_whole_one(tmp_path: Path) -> None:
    state = StateStore(tmp_path.as_uri(), {})
    plan_uri = state.uri("purge", "run", "plan.json")
    announced: list[int] = []
    cutter = _cutter(state, plan_uri, announced)
    cutter.add(_listing(0, 18))
    cutter.boundary(1, [], due=False)
    cutter.add(_listing(18, 60))
    cutter.boundary(2, [], due=False)

    assert announced == [1]
    assert cutter.finish().chunk_sizes == [18, 60]


def test_what_is_left_when_planning_ends_fills_the_chunk_window(tmp_path: Path) -> None:
    state = StateStore(tmp_path.as_uri(), {})
    plan_uri = state.uri("purge", "run", "plan.json")
    cutter = EarlyChunks(
        ChunkOutput(state, plan_uri, lambda: None),
        chunk_files=70,
        announce=lambda _: None,
        pacing=EarlyPacing(last_pieces=2),
    )
    cutter.add(_listing(0, 20))
    cutter.boundary(1, [], due=False)
    cutter.add(_listing(20, 60))

    assert cutter.finish().chunk_sizes == [20, 30, 30]


def test_a_due_checkpoint_saves_what_is_pending_without_cutting_a_chunk(tmp_path: Path) -> None:
    """Where chunks are cut never depends on how often planning checkpoints; a resumed attempt
    holds again what the parts hold, and cuts what an uninterrupted one cuts."""
    state = StateStore(tmp_path.as_uri(), {})
    plan_uri = state.uri("purge", "run", "plan.json")
    announced: list[int] = []
    cutter = _cutter(state, plan_uri, announced)
    cutter.add(_listing(0, 10))

    assert cutter.boundary(1, [], due=False) is None
    checkpoint = cutter.boundary(1, [], due=True)
    cutter.add(_listing(5, 10))
    cutter.boundary(2, [], due=True)

    assert checkpoint is not None and checkpoint.chunks_emitted == 0 and checkpoint.manifests_done == 1
    assert (checkpoint.parts_from, checkpoint.parts_written) == (0, 1)
    assert announced == []
    assert state.read(content_chunk_uri(plan_uri, 0)) is None
    resumed = _cutter(state, plan_uri, announced)
    assert resumed.resumed.manifests_done == 2
    resumed.add(_listing(0, 20))
    assert resumed.finish().chunk_sizes == [20]
    assert _chunk(state, plan_uri, 0) == [file.path for file in _listing(0, 20)]


def _paced_cutter(state: StateStore, plan_uri: str, announced: list[int], entries: list[int]) -> EarlyChunks:
    """`entries` is what each manifest's list says it holds: the projection's only input."""
    return EarlyChunks(
        ChunkOutput(state, plan_uri, lambda: None),
        chunk_files=70,
        announce=announced.append,
        manifest_entries=entries,
        pacing=EarlyPacing(overlap_min_seconds=0.5),
    )


def test_a_plan_with_little_left_to_read_cuts_nothing_until_it_ends(tmp_path: Path) -> None:
    state = StateStore(tmp_path.as_uri(), {})
    plan_uri = state.uri("purge", "run", "plan.json")
    announced: list[int] = []
    # 700 entries in all: far under the half second of decoding that pays for an overlap.
    cutter = _paced_cutter(state, plan_uri, announced, [len(listing) for listing in MANIFESTS])
    _read(cutter, range(len(MANIFESTS)))

    assert announced == [], "a chunk was cut while planning had too little left to overlap"
    summary = cutter.finish()
    assert announced == [len(summary.chunk_sizes)]
    paths = [path for index in range(len(summary.chunk_sizes)) for path in _chunk(state, plan_uri, index)]
    assert len(paths) == len(set(paths)) == 300


def test_a_plan_with_long_left_to_read_cuts_its_first_chunk_at_once(tmp_path: Path) -> None:
    state = StateStore(tmp_path.as_uri(), {})
    plan_uri = state.uri("purge", "run", "plan.json")
    announced: list[int] = []
    entries = [100, *[50_000] * (len(MANIFESTS) - 1)]
    cutter = _paced_cutter(state, plan_uri, announced, entries)
    cutter.add(MANIFESTS[0])
    cutter.boundary(1, [], due=False)

    assert cutter.seconds_left() == pytest.approx(sum(entries[1:]) / DECODED_ENTRIES_PER_SECOND)
    assert announced == [1]


def test_the_projection_counts_the_entries_left_whoever_read_the_others(tmp_path: Path) -> None:
    state = StateStore(tmp_path.as_uri(), {})
    plan_uri = state.uri("purge", "run", "plan.json")
    entries = [len(listing) for listing in MANIFESTS]
    crashed = _paced_cutter(state, plan_uri, [], entries)
    crashed.add(MANIFESTS[0])
    crashed.boundary(1, [], due=True)
    crashed.add(MANIFESTS[1])
    crashed.boundary(2, [], due=True)

    resumed = _paced_cutter(state, plan_uri, [], entries)
    resumed.add(MANIFESTS[2])
    resumed.boundary(3, [], due=False)

    assert resumed.seconds_left() == pytest.approx(sum(entries[3:]) / DECODED_ENTRIES_PER_SECOND)
