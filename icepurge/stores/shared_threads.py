"""Bounded pools on the process's shared threads: a plan's reads or a step's deletes run at most
`limit` at once, as on a pool of their own, without starting threads of their own.

Why: concurrent.futures starts each new thread inside `submit`, holding a lock every executor of
the process shares, and waits there until the thread runs; with the worker's threads busy in
Python that wait is the GIL's. Eight threads started while four others ran Python took ~90 ms
(bench.thread_starts), and every other submit in the process waited behind them: a batch of
small tables started ~13 threads a table, one pool per plan walk, manifest read and delete step.
The shared threads are started once, as the busiest moment needs them, then reused."""

from __future__ import annotations

import functools
import os
import threading
from collections import deque
from collections.abc import Callable
from concurrent.futures import Executor, Future, ThreadPoolExecutor
from concurrent.futures import wait as wait_for
from typing import Any, ParamSpec, TypeVar

P = ParamSpec("P")
T = TypeVar("T")
# Threads grow to what the bounded pools run at once and no further; no bound of its own, so
# that a task waiting on another pool's task (a step's delete waiting on its bulk requests) can
# never hold the last thread that task needs.
_SHARED_THREADS_AT_MOST = 100_000


_BY_PROCESS: dict[int, ThreadPoolExecutor] = {}
_BY_PROCESS_LOCK = threading.Lock()


def _shared() -> ThreadPoolExecutor:
    # Per process: a forked child has none of its parent's threads, though their pool says idle.
    with _BY_PROCESS_LOCK:
        pid = os.getpid()
        if pid not in _BY_PROCESS:
            _BY_PROCESS[pid] = ThreadPoolExecutor(_SHARED_THREADS_AT_MOST, thread_name_prefix="icepurge")
        return _BY_PROCESS[pid]


class BoundedPool(Executor):
    """At most `limit` of its tasks run at once, the others queued in order; `shutdown` waits for
    its own tasks only (with `cancel_futures`, drops those not started)."""

    def __init__(self, limit: int) -> None:
        if limit < 1:
            raise ValueError(f"a pool runs at least one task at once, not {limit}")
        self._limit = limit
        self._lock = threading.Lock()
        self._queued: deque[tuple[Future[Any], Callable[[], Any]]] = deque()
        self._running = 0
        self._unfinished: set[Future[Any]] = set()
        self._closed = False

    def submit(self, fn: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs) -> Future[T]:
        future: Future[T] = Future()
        with self._lock:
            if self._closed:
                raise RuntimeError("cannot schedule new futures after shutdown")
            self._queued.append((future, functools.partial(fn, *args, **kwargs)))
            self._unfinished.add(future)
        self._start_next()
        return future

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        with self._lock:
            self._closed = True
            if cancel_futures:
                while self._queued:
                    future, _ = self._queued.popleft()
                    future.cancel()
                    self._unfinished.discard(future)
            unfinished = list(self._unfinished)
        if wait:
            wait_for(unfinished)

    def _start_next(self) -> None:
        while True:
            with self._lock:
                if self._running >= self._limit or not self._queued:
                    return
                future, call = self._queued.popleft()
                self._running += 1
            _shared().submit(self._run, future, call)

    def _run(self, future: Future[Any], call: Callable[[], Any]) -> None:
        try:
            if future.set_running_or_notify_cancel():
                try:
                    result = call()
                except BaseException as error:
                    future.set_exception(error)
                else:
                    future.set_result(result)
        finally:
            with self._lock:
                self._running -= 1
                self._unfinished.discard(future)
            self._start_next()
