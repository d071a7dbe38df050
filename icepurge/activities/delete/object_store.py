"""A purge's deletes across stores: each file goes to the store its URI is on (the store layer
picks S3's and Azure's bulk APIs, the local disk in slices, any other scheme through PyIceberg's
FileIO), on one pool and one per-bucket rate budget."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeoutError
from typing import TypeVar

from icepurge.contract.schemes import StoreKind, scheme_of, store_kind
from icepurge.stores.outcomes import DeleteOutcome, DeleteTuning, LatencyObserver
from icepurge.stores.rate_budget import BucketRateLimits
from icepurge.stores.registry import open_store
from icepurge.stores.store import Deletes, Store, StoreContext

T = TypeVar("T")
# A third of the steps' heartbeat timeout (15 s): two beats may be lost before it runs out.
ALIVE_SECONDS = 5.0


def _store_key(uri: str) -> str:
    """Stores of one kind share an implementation; FileIO stores differ by scheme (gs, hdfs)."""
    kind = store_kind(uri)
    return scheme_of(uri) if kind is StoreKind.OTHER else kind


class ObjectStore:
    """Routes each file to its store; one per activity, closed after use."""

    def __init__(
        self,
        properties: dict[str, str],
        concurrency: int,
        tuning: DeleteTuning,
        requests_per_second: float | None = None,
        observer: LatencyObserver = None,
    ) -> None:
        self._limits = BucketRateLimits(requests_per_second)
        self._pool = ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix="icepurge-delete")
        # Runs a delete while the activity's own thread heartbeats (`alive`).
        self._waiting = ThreadPoolExecutor(max_workers=1, thread_name_prefix="icepurge-delete-wait")
        deletes = Deletes(self._pool, self._limits, tuning, concurrency, observer)
        self._context = StoreContext(properties, connections=concurrency + 2, deletes=deletes)
        self._stores: dict[str, Store] = {}

    def __enter__(self) -> ObjectStore:
        return self

    def __exit__(self, *_: object) -> None:
        self._waiting.shutdown(wait=True, cancel_futures=True)
        self._pool.shutdown(wait=True, cancel_futures=True)
        self._limits.close()

    def delete(self, uris: Iterable[str], alive: Callable[[], None] | None = None) -> DeleteOutcome:
        """With `alive`, called every ALIVE_SECONDS while the requests are in flight: a store
        slow to answer (each request still bounded by the client's timeouts) must not look like
        a dead worker to the step's heartbeat timeout, whose retry would send the same slow
        requests again, without end."""
        return self._beating(lambda: self._delete(uris), alive)

    def absent(self, uris: list[str], alive: Callable[[], None] | None = None) -> set[str]:
        """The files the store says it doesn't hold, a HEAD each on the pool (`alive` as for
        `delete`). A file it can't answer for counts as there: its delete is sent, and counted as
        the store answers it."""
        stores = {uri: self.store_of(uri) for uri in uris}

        def gone(uri: str) -> bool:
            try:
                return stores[uri].head(uri) is None
            except OSError:
                return False

        return self._beating(
            lambda: {uri for uri, missing in zip(uris, self._pool.map(gone, uris), strict=True) if missing},
            alive,
        )

    def _beating(self, work: Callable[[], T], alive: Callable[[], None] | None) -> T:
        if alive is None:
            return work()
        running = self._waiting.submit(work)
        while True:
            try:
                return running.result(timeout=ALIVE_SECONDS)
            except FutureTimeoutError:
                alive()

    def _delete(self, uris: Iterable[str]) -> DeleteOutcome:
        by_store: dict[str, list[str]] = defaultdict(list)
        for uri in uris:
            by_store[_store_key(uri)].append(uri)
        outcome = DeleteOutcome()
        for key, group in by_store.items():
            outcome.merge(self.store(key, group[0]).delete_many(group))
        return outcome

    def store(self, key: str, sample: str) -> Store:
        if key not in self._stores:
            self._stores[key] = open_store(sample, self._context)
        return self._stores[key]

    def store_of(self, uri: str) -> Store:
        return self.store(_store_key(uri), uri)
