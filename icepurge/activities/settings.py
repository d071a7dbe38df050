"""What the activities need from the worker's configuration."""

from __future__ import annotations

from dataclasses import dataclass, field

from icepurge.activities.engine_choice import AutoSparkThresholds
from icepurge.activities.planner import ChunkSizing
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
