"""A table purge's states, apart from the status models: the command line names them (`purge
list --state`) without loading pydantic."""

from __future__ import annotations

from enum import StrEnum


class PurgeState(StrEnum):
    PENDING = "PENDING"
    LOADING = "LOADING"
    PLANNING = "PLANNING"
    DROPPING = "DROPPING"
    # Soft delete: planned (and dropped) and waiting for its time; nothing deleted yet.
    SCHEDULED = "SCHEDULED"
    DELETING = "DELETING"
    PAUSED = "PAUSED"
    FINALIZING = "FINALIZING"
    # options.sweep_location: listing the table's location for what no metadata file knew.
    SWEEPING = "SWEEPING"
    SUCCEEDED = "SUCCEEDED"
    SUCCEEDED_WITH_ERRORS = "SUCCEEDED_WITH_ERRORS"
    FAILED = "FAILED"
    CANCELLED = "CANCELLED"
    # Undropped during its window: nothing deleted, the table registered again when it could be.
    UNDROPPED = "UNDROPPED"


TERMINAL_STATES = frozenset(
    {
        PurgeState.SUCCEEDED,
        PurgeState.SUCCEEDED_WITH_ERRORS,
        PurgeState.FAILED,
        PurgeState.CANCELLED,
        PurgeState.UNDROPPED,
    }
)
