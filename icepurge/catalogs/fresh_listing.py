"""One scope's catalog listing, shared by the live-table guards that ask for it at once.

A guard needs a listing that began after it asked: it asks once its own table is dropped, and
must see every table the catalog held from then on. A listing under way when a guard asks began
too early for it, so the guard waits for the next one, which every guard that asked meanwhile
takes too. At most one listing of a scope is under way at a time. A namespace purge's guards
listed the namespace once each before; at 10,000 tables that was 10,000 rows a guard."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Generic, TypeVar

T = TypeVar("T")
# How often a guard waiting for another guard (its listing, or its scope's index) heartbeats.
WAIT_BEAT_SECONDS = 1.0


@dataclass
class FreshListing(Generic[T]):
    _changed: threading.Condition = field(default_factory=threading.Condition)
    _started: int = 0
    _running: bool = False
    # The last listing that completed, and which start it was.
    _latest: tuple[int, T] | None = None

    def next_number(self) -> int:
        """The number of the first listing to begin after this call: what a caller asking now
        needs, and one it can hand to `take` later (a batch's guards, asking together)."""
        with self._changed:
            return self._started + 1

    def take(self, list_now: Callable[[], T], beat: Callable[[], None], wanted: int | None = None) -> T:
        """A listing begun after this call, or, given `wanted` (from `next_number`), after that
        one's call: shared, so the caller's to read, not to change. A listing that fails fails
        its maker only: a guard that waited for it makes the next one."""
        with self._changed:
            if wanted is None:
                wanted = self._started + 1
            while True:
                if self._latest is not None and self._latest[0] >= wanted:
                    return self._latest[1]
                if not self._running:
                    self._running = True
                    self._started += 1
                    mine = self._started
                    break
                self._changed.wait(timeout=WAIT_BEAT_SECONDS)
                beat()
        try:
            listed = list_now()
        except BaseException:
            with self._changed:
                self._running = False
                self._changed.notify_all()
            raise
        with self._changed:
            self._latest = (mine, listed)
            self._running = False
            self._changed.notify_all()
        return listed
