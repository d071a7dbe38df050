"""What the activities need from the worker's configuration."""

from __future__ import annotations

from dataclasses import dataclass, field

from activities.planner import ChunkSizing


@dataclass(frozen=True)
class ActivitySettings:
    state_location: str
    state_properties: dict[str, str] = field(default_factory=dict, repr=False)
    sizing: ChunkSizing = field(default_factory=ChunkSizing)
    delete_max_attempts: int = 8
    auto_spark_min_files: int = 100_000
