"""A purge's deletes across stores: each file goes to the store its URI is on (the store layer
picks S3's and Azure's bulk APIs, the local disk in slices, any other scheme through PyIceberg's
FileIO), on one pool and one per-bucket rate budget."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable
from concurrent.futures import TimeoutError as FutureTimeoutError
from dataclasses import replace

from icepurge.contract.schemes import StoreKind, scheme_of, store_kind
from icepurge.stores.outcomes import DeleteOutcome, DeleteTuning, LatencyObserver
from icepurge.stores.rate_budget import BucketRateLimits
from icepurge.stores.registry import open_store
from icepurge.stores.shared_threads import BoundedPool
from icepurge.stores.store import Deletes, Store, StoreContext

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
        self._pool = BoundedPool(concurrency)
        # Runs a delete while the activity's own thread heartbeats (`alive`).
        self._waiting = BoundedPool(1)
        contexts = {}
        for checking in (False, True):
            checked = replace(tuning, check_existence=tuning.check_existence or checking)
            deletes = Deletes(self._pool, self._limits, checked, concurrency, observer)
            contexts[checking] = StoreContext(properties, connections=concurrency + 2, deletes=deletes)
        self._contexts = contexts
        self._stores: dict[tuple[str, bool], Store] = {}

    def __enter__(self) -> ObjectStore:
        return self

    def __exit__(self, *_: object) -> None:
        self._waiting.shutdown(wait=True, cancel_futures=True)
        self._pool.shutdown(wait=True, cancel_futures=True)
        self._limits.close()

    def delete(
        self, uris: Iterable[str], alive: Callable[[], None] | None = None, asking: bool = False
    ) -> DeleteOutcome:
        """With `alive`, called every ALIVE_SECONDS while the requests are in flight: a store
        slow to answer (each request still bounded by the client's timeouts) must not look like
        a dead worker to the step's heartbeat timeout, whose retry would send the same slow
        requests again, without end. `asking`: files that may be gone already, asked about first
        where the store's delete would call them deleted (S3's `check_existence`)."""
        if alive is None:
            return self._delete(uris, asking)
        running = self._waiting.submit(self._delete, uris, asking)
        while True:
            try:
                return running.result(timeout=ALIVE_SECONDS)
            except FutureTimeoutError:
                alive()

    def _delete(self, uris: Iterable[str], asking: bool) -> DeleteOutcome:
        by_store: dict[str, list[str]] = defaultdict(list)
        for uri in uris:
            by_store[_store_key(uri)].append(uri)
        outcome = DeleteOutcome()
        for key, group in by_store.items():
            outcome.merge(self.store(key, group[0], asking).delete_many(group))
        return outcome

    def store(self, key: str, sample: str, asking: bool = False) -> Store:
        if (key, asking) not in self._stores:
            self._stores[(key, asking)] = open_store(sample, self._contexts[asking])
        return self._stores[(key, asking)]

    def store_of(self, uri: str) -> Store:
        return self.store(_store_key(uri), uri)
