"""A batch's heartbeats: its tables' steps beat as they would in activities of their own (after
each read, each group of deletes), from as many threads as the batch has tables, with details
that no retry of a batch reads (it resumes from each table's objects). Sent as they are, they
took a quarter of the worker's time (py-spy, bench.namespace_purge); this sends one heartbeat a
second per batch, without details."""

from __future__ import annotations

import threading
import time
from contextvars import ContextVar

from temporalio import activity

SECONDS_BETWEEN = 1.0


class BatchBeats:
    def __init__(self) -> None:
        self._last = 0.0
        self._lock = threading.Lock()

    def beat(self) -> None:
        now = time.monotonic()
        with self._lock:
            if now - self._last < SECONDS_BETWEEN:
                return
            self._last = now
        activity.heartbeat()


_CURRENT: ContextVar[BatchBeats] = ContextVar("icepurge_batch_beats")


def start_beats() -> None:
    """In the batch activity's own thread, before its tables' threads copy its context."""
    _CURRENT.set(BatchBeats())


def batch_heartbeat(*_details: object) -> None:
    _CURRENT.get().beat()
