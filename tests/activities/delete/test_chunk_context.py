"""A chunk finds what it needs besides its files in the context object planning writes first,
or, for a plan an older worker wrote before context objects existed, in the plan object."""

from __future__ import annotations

from pathlib import Path

from icepurge.activities.plan.chunk_context import read_chunk_context
from icepurge.activities.plan.plan_model import ChunkContext, Plan, context_uri
from icepurge.state.state_store import StateStore


def _plan(gc_enabled: bool) -> Plan:
    return Plan(
        purge_id="icepurge-old",
        metadata_location="s3://b/t/metadata/v3.metadata.json",
        gc_enabled=gc_enabled,
        locations=["s3://b/t"],
        content_chunks=[10],
        manifests=[],
        manifest_lists=[],
        statistics_files=[],
        previous_metadata_files=[],
        current_metadata_file=None,
        foreign_files=[],
    )


def test_the_context_object_is_read_when_planning_wrote_one(tmp_path: Path) -> None:
    state = StateStore(tmp_path.as_uri(), {})
    plan_uri = state.uri("purge", "run", "plan.json")
    written = ChunkContext(purge_id="icepurge-new", gc_enabled=False, locations=["s3://b/u"])
    state.write(context_uri(plan_uri), written)

    assert read_chunk_context(state, plan_uri) == written


def test_a_plan_from_before_context_objects_still_gives_its_chunks_their_context(tmp_path: Path) -> None:
    state = StateStore(tmp_path.as_uri(), {})
    plan_uri = state.uri("purge", "run", "plan.json")
    state.write(plan_uri, _plan(gc_enabled=False), compress=True)

    assert read_chunk_context(state, plan_uri) == ChunkContext(
        purge_id="icepurge-old", gc_enabled=False, locations=["s3://b/t"]
    )


def test_nothing_there_is_none(tmp_path: Path) -> None:
    state = StateStore(tmp_path.as_uri(), {})

    assert read_chunk_context(state, state.uri("purge", "run", "plan.json")) is None
