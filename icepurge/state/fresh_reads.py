"""One read of an object answers every caller that asked for it while the read before it was in
flight, and each caller's answer comes from a read sent after it asked, as its own would have.

Why: a batch's tables check their activity's fence before each change of state (attempt_fence),
from threads of their own, often together (the guards' cohort releases them at once): 3.13 reads of
the same fence a small table, an eighth of its requests (BENCHMARKS.md, "A small table's requests
and context switches, counted")."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field

Read = Callable[[str], bytes | None]


@dataclass
class _Round:
    done: threading.Event = field(default_factory=threading.Event)
    answer: bytes | None = None
    error: BaseException | None = None

    def result(self) -> bytes | None:
        self.done.wait()
        if self.error is not None:
            raise self.error
        return self.answer


class FreshReads:
    def __init__(self, read: Read) -> None:
        self._read = read
        self._lock = threading.Lock()
        # Per object: the round callers join (not sent yet), and the round in flight.
        self._gathering: dict[str, _Round] = {}
        self._in_flight: dict[str, _Round] = {}

    def read(self, uri: str) -> bytes | None:
        with self._lock:
            joined = self._gathering.get(uri)
            if joined is None:
                mine = self._gathering[uri] = _Round()
                ahead = self._in_flight.get(uri)
        if joined is not None:
            return joined.result()
        if ahead is not None:
            # Callers arriving meanwhile join this round, sent once the one ahead has answered.
            ahead.done.wait()
        with self._lock:
            del self._gathering[uri]
            self._in_flight[uri] = mine
        try:
            mine.answer = self._read(uri)
        except BaseException as error:
            mine.error = error
        finally:
            with self._lock:
                del self._in_flight[uri]
            mine.done.set()
        return mine.result()
