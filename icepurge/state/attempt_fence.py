"""Fencing an activity's attempts on the state location.

A worker cut off from Temporal keeps running and can still reach the store: after the heartbeat
timeout its activity is retried elsewhere while the old attempt may still write a checkpoint, a
chunk or spill object, a report, or delete an object the retry reads. Deletes of table files are
idempotent; writes of state are not. So a retried attempt claims its activity's fence (an
object naming the attempt) when it first touches the state location, and every write or delete
of state an attempt makes checks the fence first: an attempt that finds a newer one stops with
StaleAttemptError before touching anything, and deletes no further group of files.

What remains is a write already past its check when the newer attempt claims. Usually that is
one request (milliseconds), but a process paused between the check and its request (a frozen VM,
a stop-the-world pause) sends it whenever it resumes: one stale write an attempt, no more, since
its next change checks again. What it can reach:
- planning's objects (chunk objects, the record of chunks handed out, spilled parts, the plan):
  where planning cuts and spills depends on the manifests alone, so that write holds what the
  retry writes under the same name (planner._enumerate_content); spilled parts are removed only
  by finalize, never by a planning attempt another may still need;
- a chunk checkpoint, or finalize's progress: an older consistent snapshot of a prefix (a retry
  resuming from it sends some deletes again and counts those files already missing: each file
  still counted once, the split between deleted and already missing off by those);
- anything after finalize emptied the plan folder: one orphan state object."""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

from temporalio import activity
from temporalio.exceptions import ApplicationError

from icepurge.contract.names import ERROR_STALE_ATTEMPT
from icepurge.state.fresh_reads import FreshReads


@dataclass(frozen=True)
class AttemptKey:
    """One attempt of one activity of one workflow run."""

    workflow_id: str
    run_id: str
    activity_id: str
    attempt: int

    def fence_path(self) -> str:
        return f"fences/{self.workflow_id}/{self.run_id}/{self.activity_id}.json"


class StaleAttemptError(ApplicationError):
    def __init__(self, key: AttemptKey, newer: int) -> None:
        super().__init__(
            f"attempt {key.attempt} of activity {key.activity_id} was superseded by attempt {newer}: "
            "this worker was out of touch with Temporal past the heartbeat timeout; it stops and "
            "leaves the step to the newer attempt",
            type=ERROR_STALE_ATTEMPT,
        )


_CURRENT: ContextVar[AttemptKey | None] = ContextVar("icepurge_attempt", default=None)


@contextmanager
def fenced() -> Iterator[None]:
    """Within the block, the state location fences the running activity's attempt."""
    info = activity.info()
    if info.workflow_id is None or info.workflow_run_id is None or info.is_local:
        yield
        return
    with attempt_scope(AttemptKey(info.workflow_id, info.workflow_run_id, info.activity_id, info.attempt)):
        yield


@contextmanager
def attempt_scope(key: AttemptKey) -> Iterator[None]:
    token = _CURRENT.set(key)
    try:
        yield
    finally:
        _CURRENT.reset(token)


def current_attempt() -> AttemptKey | None:
    return _CURRENT.get()


_CLAIMS_KEPT = 4096
Read = Callable[[str], bytes | None]
Write = Callable[[str, bytes], None]


class AttemptFences:
    """The fences of one state location. An attempt after the first claims its fence before its
    first read or write there, so it resumes from what it reads after every older attempt was
    told to stop."""

    def __init__(self, read: Read, write: Write, uri: Callable[[str], str]) -> None:
        # A batch's tables check the same fence at once: one read answers those that asked
        # while the one before it was in flight.
        self._fence_reads = FreshReads(read)
        self._write = write
        self._uri = uri
        # Only retried attempts claim: a few per retried step, bounded for a long-lived worker
        # (an attempt whose claim was forgotten claims again, which changes nothing).
        self._claimed: OrderedDict[AttemptKey, None] = OrderedDict()
        # A batch's tables share one store from threads of their own.
        self._lock = threading.Lock()

    def before_read(self) -> None:
        key = current_attempt()
        if key is not None and key.attempt > 1 and not self._has_claimed(key):
            self._claim(key)

    def before_change(self) -> None:
        """Raises StaleAttemptError when a newer attempt of the running activity has begun."""
        key = current_attempt()
        if key is None:
            return
        if key.attempt > 1 and not self._has_claimed(key):
            self._claim(key)
            return
        newer = self._fenced_attempt(key)
        if newer > key.attempt:
            raise StaleAttemptError(key, newer)

    def _claim(self, key: AttemptKey) -> None:
        newer = self._fenced_attempt(key)
        if newer > key.attempt:
            raise StaleAttemptError(key, newer)
        self._write(self._uri(key.fence_path()), json.dumps({"attempt": key.attempt}).encode())
        with self._lock:
            self._claimed[key] = None
            while len(self._claimed) > _CLAIMS_KEPT:
                self._claimed.popitem(last=False)

    def _has_claimed(self, key: AttemptKey) -> bool:
        with self._lock:
            return key in self._claimed

    def _fenced_attempt(self, key: AttemptKey) -> int:
        raw = self._fence_reads.read(self._uri(key.fence_path()))
        return int(json.loads(raw)["attempt"]) if raw else 0
