"""The live-table guard's shared listing: a guard never takes a listing begun before it asked (it
could miss a table created since), and guards that ask while one runs share the next one."""

from __future__ import annotations

import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor

import pytest

from icepurge.catalogs.fresh_listing import FreshListing

WAIT = 10


class Catalog:
    """Listings numbered in the order they begin; each waits until the test lets it end."""

    def __init__(self) -> None:
        self.begun = 0
        self.release: dict[int, threading.Event] = {}
        self.failing: set[int] = set()
        self._lock = threading.Lock()

    def list_now(self) -> str:
        with self._lock:
            self.begun += 1
            number = self.begun
            release = self.release.setdefault(number, threading.Event())
        assert release.wait(WAIT)
        if number in self.failing:
            raise ConnectionError(f"listing {number} failed")
        return f"listing {number}"

    def let_end(self, number: int) -> None:
        with self._lock:
            self.release.setdefault(number, threading.Event()).set()

    def wait_begun(self, count: int) -> None:
        deadline = time.monotonic() + WAIT
        while self.begun < count:
            assert time.monotonic() < deadline, f"listing {count} never began"
            time.sleep(0.005)


def _asking(pool: ThreadPoolExecutor, shared: FreshListing[str], catalog: Catalog) -> Future[str]:
    return pool.submit(shared.take, catalog.list_now, lambda: None)


def _wait_waiting(shared: FreshListing[str], guards: int) -> None:
    """Until `guards` threads wait on the listing's condition (they asked)."""
    deadline = time.monotonic() + WAIT
    while len(shared._changed._waiters) < guards:  # type: ignore[attr-defined]
        assert time.monotonic() < deadline
        time.sleep(0.005)


def test_a_guard_asking_during_a_listing_takes_the_next_one_with_the_others_asking() -> None:
    catalog, shared = Catalog(), FreshListing[str]()
    with ThreadPoolExecutor(4) as pool:
        first = _asking(pool, shared, catalog)
        catalog.wait_begun(1)
        # A table created now is missing from listing 1: these guards asked after it began.
        later = [_asking(pool, shared, catalog) for _ in range(3)]
        _wait_waiting(shared, 3)
        catalog.let_end(1)
        assert first.result(WAIT) == "listing 1"
        catalog.wait_begun(2)
        catalog.let_end(2)
        assert [guard.result(WAIT) for guard in later] == ["listing 2"] * 3
    assert catalog.begun == 2


def test_a_guard_alone_lists_for_itself_each_time() -> None:
    catalog, shared = Catalog(), FreshListing[str]()
    for number in (1, 2, 3):
        catalog.let_end(number)
        assert shared.take(catalog.list_now, lambda: None) == f"listing {number}"


def test_a_failed_listing_fails_its_maker_and_a_waiting_guard_lists_again() -> None:
    catalog, shared = Catalog(), FreshListing[str]()
    catalog.failing.add(1)
    with ThreadPoolExecutor(2) as pool:
        failing = _asking(pool, shared, catalog)
        catalog.wait_begun(1)
        waiting = _asking(pool, shared, catalog)
        _wait_waiting(shared, 1)
        catalog.let_end(1)
        with pytest.raises(ConnectionError, match="listing 1 failed"):
            failing.result(WAIT)
        catalog.wait_begun(2)
        catalog.let_end(2)
        assert waiting.result(WAIT) == "listing 2"
