"""Where a planner's chunk objects go: beside the plan in the state location, each write keeping
the planning attempt alive."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from icepurge.state.state_store import StateStore


@dataclass(frozen=True)
class ChunkOutput:
    state: StateStore
    plan_uri: str
    beat: Callable[[], None]
