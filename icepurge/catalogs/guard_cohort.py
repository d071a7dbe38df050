"""The live-table guards of one small-table batch, asking for their scope's listing together.

A guard asking alone starts a listing, and the next guard, asking while it runs, must wait for the
one after (icepurge/catalogs/fresh_listing.py): a batch's tables, dropped a few milliseconds apart,
took a listing each. At 10,000 tables in a namespace that was a third of a worker's CPU. Here each
table of the batch says once that it asks, or that it is past the point of asking (it ended before
its guard, or its guard is done). When every table has, the listing they need is the next one to
begin: it began after each of them asked, so it is fresh for all, and they share it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from icepurge.catalogs.fresh_listing import WAIT_BEAT_SECONDS, FreshListing


@dataclass
class GuardCohort:
    """One batch's tables, a party each. Every party must end asking or past asking, and all must
    run at once (a thread each): a party that never comes would hold the others at their guards."""

    tables: int
    _changed: threading.Condition = field(default_factory=threading.Condition)
    _done_asking: set[int] = field(default_factory=set)
    # Each asked-for listing's number, set once every party asked or is past asking.
    _numbers: dict[int, int] | None = None
    _asked: list[FreshListing[Any]] = field(default_factory=list)

    def parties(self) -> list[GuardParty]:
        return [GuardParty(self, index) for index in range(self.tables)]

    def number(self, party: int, listing: FreshListing[Any], beat: Callable[[], None]) -> int:
        with self._changed:
            if self._numbers is None and party not in self._done_asking:
                self._asked.append(listing)
                self._done_asking.add(party)
                self._release_when_all_asked()
                while self._numbers is None:
                    self._changed.wait(timeout=WAIT_BEAT_SECONDS)
                    if self._numbers is None:
                        beat()
                return self._numbers[id(listing)]
        return listing.next_number()

    def past_asking(self, party: int) -> None:
        with self._changed:
            self._done_asking.add(party)
            self._release_when_all_asked()

    def _release_when_all_asked(self) -> None:
        if self._numbers is None and len(self._done_asking) >= self.tables:
            self._numbers = {id(listing): listing.next_number() for listing in self._asked}
            self._asked.clear()
            self._changed.notify_all()


@dataclass(frozen=True)
class GuardParty:
    """One table of a cohort."""

    cohort: GuardCohort
    index: int

    def number(self, listing: FreshListing[Any], beat: Callable[[], None]) -> int:
        """The number of `listing` this table takes: once every party asked or is past asking, the
        next to begin. Asked again (a guard retried), the next to begin now."""
        return self.cohort.number(self.index, listing, beat)

    def past_asking(self) -> None:
        """This table asks no more: its guard is done, or it ended before one."""
        self.cohort.past_asking(self.index)
