"""Many files read at once on a bounded pool, handed back in the order asked."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Executor, Future
from functools import partial
from itertools import islice
from typing import TypeVar

from pyiceberg.io import FileIO
from pyiceberg.table.metadata import TableMetadata

from icepurge.activities.plan.manifest_reader import fetch
from icepurge.activities.plan.metadata_reader import parse_metadata, read_bytes

T = TypeVar("T")
# How long a wait for a read may go without a heartbeat.
_BEAT_SECONDS = 1.0


class OrderedReads:
    """A walk over the metadata costs the slowest reads of a window, not the sum of every read.
    The activity's thread heartbeats while it waits (the pool's threads can't)."""

    def __init__(self, io: FileIO, pool: Executor, window: int, beat: Callable[[], None]) -> None:
        self._io = io
        self._pool = pool
        self._window = window
        self._beat = beat

    def fetch(self, location: str) -> bytes:
        return fetch(self._io, location)

    def metadata(self, location: str) -> tuple[TableMetadata, int]:
        """The metadata file and its size in bytes."""
        raw = read_bytes(self._io, location)
        return parse_metadata(raw, location), len(raw)

    def in_order(
        self, read: Callable[[str], T], locations: Iterable[str]
    ) -> Iterator[tuple[str, Callable[[], T]]]:
        """(location, its result): the result raises what the read raised."""
        upcoming = iter(locations)
        pending: deque[tuple[str, Future[T]]] = deque()
        for location in islice(upcoming, self._window):
            pending.append((location, self._pool.submit(read, location)))
        while pending:
            location, future = pending.popleft()
            following = next(upcoming, None)
            if following is not None:
                pending.append((following, self._pool.submit(read, following)))
            yield location, partial(_result, future, self._beat)
            self._beat()


def _result(read: Future[T], beat: Callable[[], None]) -> T:
    while True:
        try:
            return read.result(timeout=_BEAT_SECONDS)
        except TimeoutError:
            beat()
