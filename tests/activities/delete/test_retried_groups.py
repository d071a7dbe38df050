"""Delete groups on a retried attempt (icepurge.activities.delete.retried_groups): a first
attempt sends full groups (a chunk's: one request a slot; finalize's: a slice of 8,000 files);
an attempt after one that died starts at one request and doubles, so it saves a checkpoint soon
after it starts however often workers die. Files on the local disk, deleted through the purge's
own stores."""

from __future__ import annotations

import json
from pathlib import Path

from icepurge.activities.delete.chunk_deleter import ChunkJob
from icepurge.activities.delete.object_store import ObjectStore
from icepurge.activities.finalize.finalizer import FinalizeWork, finalize, progress_uri
from icepurge.activities.plan.plan_model import ContentFile, Plan
from icepurge.catalogs.locations import LocationGuard
from icepurge.contract.counts import Category, FileCounts
from icepurge.contract.steps import ChunkCheckpoint
from icepurge.state.attempt_fence import AttemptKey, attempt_scope
from icepurge.state.state_store import StateStore
from icepurge.stores.outcomes import DeleteTuning

SLOTS = 4
KEYS_A_REQUEST = 2
FILES = 20
MANIFESTS = 2_500


def _paths(folder: Path, count: int, suffix: str) -> list[str]:
    folder.mkdir(parents=True)
    paths = []
    for index in range(count):
        path = folder / f"{index:05d}{suffix}"
        path.write_bytes(b"x")
        paths.append(path.as_uri())
    return paths


def _files(table: Path) -> list[ContentFile]:
    paths = _paths(table / "data", FILES, ".parquet")
    return [ContentFile(path=path, category=Category.DATA_FILES, size=1) for path in paths]


def _run(tmp_path: Path, attempt: int, resume_at: int = 0) -> tuple[list[int], ChunkCheckpoint, list[str]]:
    """The checkpoints one attempt saved, its last, and the files left on the disk."""
    table = tmp_path / "table"
    files = _files(table)
    state = StateStore((tmp_path / "state").as_uri(), {})
    outcome_uri = state.uri("purge-1", "run-1", "chunks", "000000.json")
    for file in files[:resume_at]:
        Path(file.path.removeprefix("file://")).unlink()
    saved: list[int] = []
    tuning = DeleteTuning(batch_files=KEYS_A_REQUEST)
    with attempt_scope(AttemptKey("purge-1", "run-1", "4", attempt)), ObjectStore({}, SLOTS, tuning) as store:
        job = ChunkJob(
            files=files,
            gc_enabled=True,
            outcome_uri=outcome_uri,
            store=store,
            state=state,
            guard=LocationGuard([table.as_uri()]),
            dry_run=False,
            heartbeat=lambda checkpoint: saved.append(checkpoint.next_file),
            concurrency=SLOTS,
            batch_files=KEYS_A_REQUEST,
        )
        start = ChunkCheckpoint(next_file=resume_at)
        start.counts.of(Category.DATA_FILES).deleted = resume_at
        outcome, _ = job.run(start)
    left = sorted(path.name for path in (table / "data").iterdir())
    return saved, outcome.checkpoint, left


def _finalize(tmp_path: Path, attempt: int) -> tuple[list[tuple[int, int]], int]:
    """The progress finalize saved (group, path in it) on a table of MANIFESTS manifests, and the
    manifests it counted deleted."""
    table = tmp_path / "table"
    plan = Plan(
        purge_id="purge-1",
        metadata_location=f"{table.as_uri()}/metadata/v1.metadata.json",
        gc_enabled=True,
        locations=[table.as_uri()],
        content_chunks=[],
        manifests=_paths(table / "metadata", MANIFESTS, "-m0.avro"),
        manifest_lists=[],
        statistics_files=[],
        previous_metadata_files=[],
        current_metadata_file=None,
        foreign_files=[],
    )
    state = StateStore((tmp_path / "state").as_uri(), {})
    plan_uri = state.uri("purge-1", "run-1", "plan.json")
    saved: list[tuple[int, int]] = []

    def beat() -> None:
        raw = state.read(progress_uri(plan_uri))
        if raw is not None:
            progress = json.loads(raw)
            saved.append((progress["next_group"], progress["next_path"]))

    scope = attempt_scope(AttemptKey("purge-1", "run-1", "9", attempt))
    with scope, ObjectStore({}, SLOTS, DeleteTuning()) as store:
        result = finalize(
            FinalizeWork(
                plan=plan,
                plan_uri=plan_uri,
                chunk_count=0,
                store=store,
                state=state,
                dry_run=False,
                keep_metadata_chain=False,
                counts_so_far=FileCounts(),
                beat=beat,
            )
        )
    assert list((table / "metadata").iterdir()) == []
    return list(dict.fromkeys(saved)), result.counts.of(Category.MANIFESTS).deleted


def test_a_first_attempt_sends_a_request_a_slot_in_every_group(tmp_path: Path) -> None:
    saved, checkpoint, left = _run(tmp_path, attempt=1)
    assert saved == [8, 16, 20]
    assert checkpoint.counts.of(Category.DATA_FILES).deleted == FILES
    assert left == []


def test_a_retried_attempt_starts_at_one_request_and_doubles_to_a_full_group(tmp_path: Path) -> None:
    saved, checkpoint, left = _run(tmp_path, attempt=2)
    assert saved == [2, 6, 14, 20]
    assert checkpoint.counts.of(Category.DATA_FILES).deleted == FILES
    assert left == []


def test_a_retried_attempt_ramps_from_where_the_last_one_saved(tmp_path: Path) -> None:
    """Resumed at file 5 (the files before it gone, counted by the attempt that deleted them):
    each file is still counted once."""
    saved, checkpoint, left = _run(tmp_path, attempt=3, resume_at=5)
    assert saved == [7, 11, 19, 20]
    assert checkpoint.next_file == FILES
    assert checkpoint.counts.of(Category.DATA_FILES).deleted == FILES
    assert left == []


def test_finalize_saves_once_a_group_on_a_first_attempt(tmp_path: Path) -> None:
    saved, deleted = _finalize(tmp_path, attempt=1)
    assert saved == [(1, 0)]
    assert deleted == MANIFESTS


def test_a_retried_finalize_saves_after_its_first_thousand_files(tmp_path: Path) -> None:
    saved, deleted = _finalize(tmp_path, attempt=2)
    assert saved == [(0, 1_000), (1, 0)]
    assert deleted == MANIFESTS
