"""A purge's request budget per bucket, split among the delete tasks that run at once.

Every task (a local chunk, or one Spark task of a chunk) holds an equal share, so however
the tasks are spread over threads, processes and hosts, their sum stays within the budget
without any coordination between them. A task's limiter starts full: its first request waits
one window, so a task taking over a slot can't add a burst to what the task before it sent in
its last window.
"""

from __future__ import annotations

import math
import threading

from pyrate_limiter import Duration, Limiter, Rate


def task_share(budget: float | None, concurrent_tasks: int) -> float | None:
    return None if budget is None else budget / max(concurrent_tasks, 1)


def _rate(requests_per_second: float) -> Rate:
    # Rounded down, so a share is never exceeded.
    if requests_per_second >= 1:
        return Rate(math.floor(requests_per_second), Duration.SECOND)
    return Rate(1, math.ceil(1000 / requests_per_second))


class BucketRateLimits:
    """Blocks each request until its bucket's share allows it; no limit when the share is None."""

    def __init__(self, requests_per_second: float | None) -> None:
        self._rate = None if requests_per_second is None else _rate(requests_per_second)
        self._limiters: dict[str, Limiter] = {}
        self._lock = threading.Lock()

    def acquire(self, bucket: str) -> None:
        if self._rate is None:
            return
        with self._lock:
            limiter = self._limiters.get(bucket)
            if limiter is None:
                limiter = self._limiters[bucket] = Limiter(self._rate)
                limiter.try_acquire(bucket, weight=self._rate.limit)
        limiter.try_acquire(bucket)

    def close(self) -> None:
        with self._lock:
            for limiter in self._limiters.values():
                limiter.close()
            self._limiters.clear()
