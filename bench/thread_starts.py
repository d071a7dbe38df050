"""What a pool of its own costs a step when other threads run Python: 8 tasks submitted to a new
ThreadPoolExecutor (each submit starts a thread, under the lock every executor of the process
shares, and waits for it to run) against the same on a BoundedPool over the process's shared
threads (icepurge.stores.shared_threads), with --busy threads spinning in Python meanwhile.

    .venv/bin/python -m bench.thread_starts [--busy 4] [--rounds 40]
"""

from __future__ import annotations

import argparse
import statistics
import threading
import time
from collections.abc import Callable
from concurrent.futures import Executor, ThreadPoolExecutor

from icepurge.stores.shared_threads import BoundedPool

TASKS = 8


def _spin(stop: threading.Event) -> None:
    spun = 0
    while not stop.is_set():
        spun += 1


def _round(make: Callable[[], Executor]) -> float:
    """Seconds from the pool's creation until its 8 tasks are submitted."""
    started = time.perf_counter()
    with make() as pool:
        futures = [pool.submit(time.sleep, 0) for _ in range(TASKS)]
        submitted = time.perf_counter() - started
    for future in futures:
        future.result()
    return submitted


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--busy", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=40)
    arguments = parser.parse_args()
    stop = threading.Event()
    spinners = [threading.Thread(target=_spin, args=(stop,), daemon=True) for _ in range(arguments.busy)]
    for spinner in spinners:
        spinner.start()
    contenders: dict[str, Callable[[], Executor]] = {
        "a new ThreadPoolExecutor(8)": lambda: ThreadPoolExecutor(TASKS),
        "BoundedPool(8) on shared threads": lambda: BoundedPool(TASKS),
    }
    try:
        figures = {
            name: sorted(_round(make) for _ in range(arguments.rounds)) for name, make in contenders.items()
        }
    finally:
        stop.set()
    print(
        f"{TASKS} tasks submitted to a new pool, {arguments.busy} threads running Python, "
        f"{arguments.rounds} rounds"
    )
    base = statistics.median(next(iter(figures.values())))
    for name, seconds in figures.items():
        median = statistics.median(seconds)
        p90 = seconds[int(len(seconds) * 0.9)]
        print(f"  {name}: median {median * 1000:.2f} ms, p90 {p90 * 1000:.2f} ms ({median / base:.3f}x)")


if __name__ == "__main__":
    main()
