"""What a bulk delete reports, and how deletes are tuned: shared by every store."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

# S3's limit on keys per DeleteObjects, the default batch (other stores cap it lower).
S3_BATCH = 1000

# Hears each delete request's latency in seconds (the worker's metrics); None = nobody listens.
LatencyObserver = Callable[[float], None] | None


def observed(observer: LatencyObserver, started: float) -> None:
    if observer is not None:
        observer(time.monotonic() - started)


@dataclass(frozen=True)
class DeleteTuning:
    """How deletes are sent: attempts per request (5xx, SlowDown) and keys per bulk request
    (S3 takes up to 1000; some S3-compatible stores take fewer)."""

    max_attempts: int = 8
    batch_files: int = S3_BATCH
    # HEAD each key first: a bulk delete reports a key that was already gone as deleted.
    check_existence: bool = False


@dataclass
class RequestStats:
    """Delete requests sent, and how many of them the store throttled (then retried)."""

    requests: int = 0
    throttled: int = 0

    def add(self, other: RequestStats | DeleteOutcome) -> None:
        self.requests += other.requests
        self.throttled += other.throttled


@dataclass
class DeleteOutcome:
    deleted: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    failed: list[tuple[str, str]] = field(default_factory=list)
    requests: int = 0
    throttled: int = 0

    def merge(self, other: DeleteOutcome) -> None:
        self.deleted.extend(other.deleted)
        self.missing.extend(other.missing)
        self.failed.extend(other.failed)
        self.requests += other.requests
        self.throttled += other.throttled
