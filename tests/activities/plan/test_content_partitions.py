"""Planning's deduplication with a memory budget far below the table: buckets spill to the
state location and merge back, and every distinct file lands in exactly one chunk object."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel

from icepurge.activities.plan.chunk_output import ChunkOutput
from icepurge.activities.plan.content_partitions import ContentPartitioner
from icepurge.activities.plan.plan_model import ContentChunk, ContentFile, content_chunk_uri, spill_part_uris
from icepurge.contract.counts import Category
from icepurge.state.state_store import StateStore


def _listing(start: int, count: int) -> list[ContentFile]:
    category = Category.DATA_FILES
    return [
        ContentFile(f"s3://b/t/data/{index:05d}.parquet", category, index)
        for index in range(start, start + count)
    ]


class _SpillCountingStore(StateStore):
    def __init__(self, location: str) -> None:
        super().__init__(location, {})
        self.spilled = 0

    def write(self, uri: str, document: BaseModel | dict[str, Any], compress: bool = False) -> None:
        self.spilled += "/spill/" in uri
        super().write(uri, document, compress)


def test_spilled_buckets_merge_into_distinct_chunks(tmp_path: Path) -> None:
    state = _SpillCountingStore(tmp_path.as_uri())
    plan_uri = state.uri("purge", "run", "plan.json")
    # Five manifests over 300 files, overlapping as rewrites do: 700 listings.
    manifests = [
        _listing(0, 100),
        _listing(50, 150),
        _listing(0, 200),
        _listing(150, 150),
        _listing(100, 100),
    ]
    partitioner = ContentPartitioner(
        ChunkOutput(state, plan_uri, lambda: None), expected_entries=700, memory_files=60, chunk_files=70
    )
    for listing in manifests:
        partitioner.add(listing)

    summary = partitioner.finish()

    assert state.spilled > 12, "the budget is far below the table: buckets must have spilled"

    chunks = []
    for index, size in enumerate(summary.chunk_sizes):
        raw = state.read(content_chunk_uri(plan_uri, index))
        assert raw is not None
        files = ContentChunk.model_validate_json(raw).files()
        assert len(files) == size <= 70
        chunks.extend(files)
    assert sorted(file.path for file in chunks) == sorted({file.path for file in _listing(0, 300)})
    assert summary.by_category == {Category.DATA_FILES: 300}
    assert {file.size for file in chunks} == set(range(300))
    # The parts stay for finalize (a retried planning attempt may still read them); the plan
    # names where they are, every one.
    parts = {path.as_uri() for path in (tmp_path / "purge" / "run" / "spill").glob("*.json")}
    assert parts and parts <= set(spill_part_uris(plan_uri, summary.spill))
    written = len(list((tmp_path / "purge" / "run").rglob("*.json")))
    assert written == len(summary.chunk_sizes) + len(parts)
