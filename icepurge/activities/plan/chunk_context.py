"""What a chunk needs besides its files: the context planning writes before the first chunk, or,
for a plan an older worker wrote (no context object), the same fields from the plan object. So a
purge planned before an upgrade finishes on upgraded workers."""

from __future__ import annotations

from icepurge.activities.plan.plan_model import ChunkContext, Plan, context_uri
from icepurge.state.state_store import StateStore


def read_chunk_context(state: StateStore, plan_uri: str) -> ChunkContext | None:
    """None when neither object is there."""
    raw = state.read(context_uri(plan_uri))
    if raw is not None:
        return ChunkContext.model_validate_json(raw)
    raw = state.read(plan_uri)
    if raw is None:
        return None
    plan = Plan.model_validate_json(raw)
    return ChunkContext(purge_id=plan.purge_id, gc_enabled=plan.gc_enabled, locations=plan.locations)
