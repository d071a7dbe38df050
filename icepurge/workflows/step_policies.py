"""Retry and heartbeat settings shared by the workflows' long, checkpointing steps."""

from __future__ import annotations

from datetime import timedelta

from temporalio.common import RetryPolicy

# Transient faults are retried with backoff for as long as the step's own timeout allows; the
# step reports each failed attempt, so the retrying is visible.
TRANSIENT_RETRY = RetryPolicy(
    initial_interval=timedelta(seconds=1),
    backoff_coefficient=2.0,
    maximum_interval=timedelta(seconds=60),
)
# Long enough for one group of bulk deletes (or one metadata read or listing page) between
# heartbeats; short enough that a killed worker's step is picked up again quickly. Every long
# step checkpoints, so a retry resumes rather than starting over.
HEARTBEAT_TIMEOUT = timedelta(seconds=15)
