"""Bounded pools on the process's shared threads: each keeps its own bound, order, results and
shutdown, as a pool of its own would, and a pool made after the threads exist starts none."""

from __future__ import annotations

import threading
import time

import pytest

from icepurge.stores.shared_threads import BoundedPool


def test_a_pool_runs_at_most_its_limit_at_once_and_hands_back_results_and_errors() -> None:
    running, most = 0, 0
    lock = threading.Lock()
    # The first tasks hold until the pool has its limit running: on a busy machine a sleep alone
    # let a task end before the third began, and the bound looked unreached.
    full = threading.Event()

    def task(value: int) -> int:
        nonlocal running, most
        with lock:
            running += 1
            most = max(most, running)
            if running == 3:
                full.set()
        full.wait(10)
        time.sleep(0.001)
        with lock:
            running -= 1
        if value == 7:
            raise KeyError(value)
        return value * 2

    with BoundedPool(3) as pool:
        futures = [pool.submit(task, value) for value in range(12)]
    assert most == 3
    assert [future.result() for future in futures if not future.exception()] == [
        value * 2 for value in range(12) if value != 7
    ]
    with pytest.raises(KeyError):
        futures[7].result()
    assert list(BoundedPool(2).map(lambda value: value + 1, range(5))) == [1, 2, 3, 4, 5]


def test_shutdown_cancels_what_has_not_started_and_refuses_more() -> None:
    release = threading.Event()
    pool = BoundedPool(1)
    first = pool.submit(release.wait, 10)
    queued = [pool.submit(time.sleep, 0) for _ in range(3)]
    release.set()
    pool.shutdown(wait=True, cancel_futures=True)
    assert first.result() is True
    assert all(future.cancelled() or future.done() for future in queued)
    with pytest.raises(RuntimeError, match="after shutdown"):
        pool.submit(time.sleep, 0)
    with pytest.raises(ValueError, match="at least one"):
        BoundedPool(0)


def test_a_task_waiting_on_another_pools_tasks_never_starves_them() -> None:
    """A step's delete waits on its bulk requests, each pool bounded; the shared threads grow."""
    inner = BoundedPool(4)
    with BoundedPool(16) as outer:
        waiting = [outer.submit(lambda: sum(inner.map(lambda value: value, range(4)))) for _ in range(16)]
        assert [future.result(timeout=30) for future in waiting] == [6] * 16
    inner.shutdown()


def test_pools_made_after_the_threads_exist_reuse_them(monkeypatch: pytest.MonkeyPatch) -> None:
    """Counted by thread starts: pools of their own would start 160 threads for these 20 pools of 8.
    A thread that has just finished a task may not yet say it is idle when the next pool asks,
    so a few may start; not one a task."""
    with BoundedPool(8) as warm:
        list(warm.map(time.sleep, [0.01] * 8))
    starts = 0
    start = threading.Thread.start

    def counted(thread: threading.Thread) -> None:
        nonlocal starts
        starts += 1
        start(thread)

    monkeypatch.setattr(threading.Thread, "start", counted)
    for _ in range(20):
        with BoundedPool(8) as pool:
            list(pool.map(time.sleep, [0.001] * 8))
    assert starts <= 8
