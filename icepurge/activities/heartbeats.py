"""Heartbeats, throttled per activity. A thread-pool activity's heartbeat waits until the worker's
event loop takes it (temporalio hands it over with run_coroutine_threadsafe and waits for the
result), so a step that beat after every read, group or event waited behind every workflow task
the loop had queued: under 30 concurrent drops through the front door that was 70 % of
load_and_plan's time and most of deliver_events' (py-spy on bench.front_door_load); a batch's
tables, each beating from its own thread, took a quarter of the worker (bench.namespace_purge).

A heartbeat whose details differ from the last one sent (a new checkpoint) goes out at once; one
that only says the step is alive (no details, or the details last sent) at most once a second.
The SDK sends to the server at most every 2 s anyway (worker.run.HEARTBEAT_THROTTLE), and no
step's correctness rests on its latest details reaching the server: a killed worker loses them
too, and every step resumes from an earlier checkpoint by redoing its work idempotently."""

from __future__ import annotations

import contextvars
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from contextvars import ContextVar

from temporalio import activity

SECONDS_BETWEEN = 1.0


class Beats:
    """One activity's heartbeats. `keep_details` False: every beat goes out bare (a batch's
    details, which no retry of a batch reads) and only the time throttles it."""

    def __init__(
        self,
        keep_details: bool = True,
        send: Callable[..., None] = activity.heartbeat,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._keep_details = keep_details
        self._send = send
        self._clock = clock
        self._lock = threading.Lock()
        self._last_at: float | None = None
        self._last_details: tuple[object, ...] = ()

    def beat(self, *details: object) -> None:
        sent = details if self._keep_details else ()
        now = self._clock()
        with self._lock:
            alive_only = sent == self._last_details
            if alive_only and self._last_at is not None and now - self._last_at < SECONDS_BETWEEN:
                return
            self._last_at, self._last_details = now, sent
        self._send(*sent)

    def pulse(self) -> None:
        """Says the step is alive with the details last sent: a bare beat would replace the
        checkpoint a retry resumes from."""
        now = self._clock()
        with self._lock:
            if self._last_at is not None and now - self._last_at < SECONDS_BETWEEN:
                return
            self._last_at = now
            details = self._last_details
        self._send(*details)


_CURRENT: ContextVar[Beats] = ContextVar("icepurge_activity_beats")


def _beats() -> Beats:
    beats = _CURRENT.get(None)
    if beats is None:
        beats = Beats()
        _CURRENT.set(beats)
    return beats


def heartbeat(*details: object) -> None:
    """activity.heartbeat, throttled for the calling activity (each runs in a context of its own).
    A local activity has no heartbeat to keep: the SDK's core answers its beats with a warning."""
    if not activity.info().is_local:
        _beats().beat(*details)


@contextmanager
def pulsing() -> Iterator[None]:
    """While the block runs, a beat a second from a thread of its own, beside the work's own: a
    step whose calls can't beat (a catalog call) can then have a heartbeat timeout of a few
    seconds, and a worker that dies inside one costs that, not the call's whole timeout. A local
    activity has no heartbeat to keep."""
    if activity.info().is_local:
        yield
        return
    beats = _beats()
    context = contextvars.copy_context()
    stop = threading.Event()

    def pulse() -> None:
        while not stop.wait(SECONDS_BETWEEN):
            # A beat the worker's event loop could not take in time: the next one may.
            with suppress(Exception):
                context.run(beats.pulse)

    thread = threading.Thread(target=pulse, name="icepurge-pulse", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()


def start_batch_beats() -> None:
    """In a batch activity's own thread, before its tables' threads copy its context: one bare
    heartbeat a second for the whole batch."""
    _CURRENT.set(Beats(keep_details=False))
