"""Signals to a purge's workflow what it can't see of its activities: a running chunk's counts,
so status moves during a long chunk; an attempt that failed and will be retried, so status,
events and the Web UI say what the purge is waiting for; chunks planning has made ready, so
deletes start before the plan is done.

Sync activities have no client of their own: signals are sent on the worker's event loop,
without waiting; progress at most once per interval per chunk. A lost signal costs nothing: the
chunk's result supersedes its progress, the server's pending activity still shows a retry, and
a chunk not announced starts when the plan is done.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future

from temporalio import activity
from temporalio.client import Client

from icepurge.contract.counts import FileCounts
from icepurge.contract.names import CHUNK_PROGRESS_SIGNAL, CHUNKS_READY_SIGNAL, STEP_RETRYING_SIGNAL
from icepurge.contract.steps import ChunkProgress, ChunksReady, StepAttemptFailed

log = logging.getLogger(__name__)

Send = Callable[[FileCounts], None]
_ERROR_LIMIT = 300


def _log_failure(sent: Future[None]) -> None:
    if not sent.cancelled() and sent.exception() is not None:
        log.debug("progress signal not delivered: %s", type(sent.exception()).__name__)


class ProgressSignals:
    def __init__(self, client: Client, loop: asyncio.AbstractEventLoop, interval_seconds: float) -> None:
        self._client = client
        self._loop = loop
        self._interval = interval_seconds

    def attempt_failed(self, step: str, error: str) -> None:
        """Tells the current activity's workflow that this attempt failed with `error`."""
        info = activity.info()
        if info.workflow_id is None or self._loop.is_closed():
            return
        handle = self._client.get_workflow_handle(info.workflow_id, run_id=info.workflow_run_id)
        failed = StepAttemptFailed(step=step, attempt=info.attempt, error=error[:_ERROR_LIMIT])
        sent = asyncio.run_coroutine_threadsafe(handle.signal(STEP_RETRYING_SIGNAL, failed), self._loop)
        sent.add_done_callback(_log_failure)

    def chunks_ready(self, ready: ChunksReady) -> None:
        """Tells the current (planning) activity's workflow that chunks may start."""
        info = activity.info()
        if info.workflow_id is None or self._loop.is_closed():
            return
        handle = self._client.get_workflow_handle(info.workflow_id, run_id=info.workflow_run_id)
        sent = asyncio.run_coroutine_threadsafe(handle.signal(CHUNKS_READY_SIGNAL, ready), self._loop)
        sent.add_done_callback(_log_failure)

    def for_chunk(self, chunk_index: int) -> ProgressReport:
        """A reporter for the current activity's chunk."""
        info = activity.info()
        if info.workflow_id is None:
            return ProgressReport(self._interval, None)
        handle = self._client.get_workflow_handle(info.workflow_id, run_id=info.workflow_run_id)

        def send(counts: FileCounts) -> None:
            if self._loop.is_closed():  # the worker is shutting down
                return
            update = ChunkProgress(chunk_index=chunk_index, counts=counts)
            sent = asyncio.run_coroutine_threadsafe(handle.signal(CHUNK_PROGRESS_SIGNAL, update), self._loop)
            sent.add_done_callback(_log_failure)

        return ProgressReport(self._interval, send)


class ProgressReport:
    """Call it from any thread, as often as you like: signals go out at most once per interval,
    and the latest counts always go out (a report inside the interval is sent when it ends)
    until the reporter is closed, when the chunk's result supersedes anything pending."""

    def __init__(self, interval: float, send: Send | None) -> None:
        self._interval = interval
        self._send = send
        self._lock = threading.Lock()
        self._last_sent = float("-inf")
        self._pending: FileCounts | None = None
        self._timer: threading.Timer | None = None

    def __enter__(self) -> ProgressReport:
        return self

    def __exit__(self, *_: object) -> None:
        with self._lock:
            self._send = None
            if self._timer is not None:
                self._timer.cancel()

    def __call__(self, counts: FileCounts) -> None:
        with self._lock:
            if self._send is None:
                return
            self._pending = counts.model_copy(deep=True)
            if self._timer is not None:
                return
            wait = self._last_sent + self._interval - time.monotonic()
            if wait > 0:
                self._timer = threading.Timer(wait, self._flush)
                self._timer.daemon = True
                self._timer.start()
                return
        self._flush()

    def _flush(self) -> None:
        with self._lock:
            counts, send = self._pending, self._send
            self._pending, self._timer = None, None
            self._last_sent = time.monotonic()
        if counts is not None and send is not None:
            send(counts)
