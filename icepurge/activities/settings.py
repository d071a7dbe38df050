"""What the activities need from the worker's configuration."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from icepurge.activities.delete.engine_choice import AutoSparkThresholds
from icepurge.activities.plan.planner import ChunkSizing
from icepurge.activities.signals.progress_signals import ProgressSignals
from icepurge.state.state_store import StateStore
from icepurge.stores.outcomes import DeleteTuning


@dataclass(frozen=True)
class ActivitySettings:
    state_location: str
    state_properties: dict[str, str] = field(default_factory=dict, repr=False)
    sizing: ChunkSizing = field(default_factory=ChunkSizing)
    tuning: DeleteTuning = field(default_factory=DeleteTuning)
    auto_spark: AutoSparkThresholds = field(default_factory=AutoSparkThresholds)
    # How long an unreachable store (configuration fault) is retried before the run fails.
    config_fault_seconds: float = 300.0


@dataclass(frozen=True)
class StepContext:
    """What the services of one worker share: the state store (a plan held in memory by planning
    is read back by the chunks and finalize of the same store), the workflows' signals (None: no
    workflow to tell, a batch's tables) and the heartbeat."""

    state: StateStore
    signals: ProgressSignals | None
    heartbeat: Callable[..., None]
