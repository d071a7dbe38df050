"""What every store's bulk deleter shares (S3 DeleteObjects, Azure Blob Batch, GCS batches): the
purge's pool, rate budget and attempts; each URI's group (a bucket, a container) and key; groups
cut into batches of at most what the store's API takes, deleted on the pool in rounds."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections import defaultdict
from typing import Generic, TypeVar

from icepurge.stores.bulk_rounds import Rounds, in_batches
from icepurge.stores.outcomes import DeleteOutcome
from icepurge.stores.store import Deletes

Group = TypeVar("Group")


class BatchDeleter(ABC, Generic[Group]):
    def __init__(self, deletes: Deletes, most_keys: int) -> None:
        self._pool = deletes.pool
        self._limits = deletes.limits
        self._max_attempts = deletes.tuning.max_attempts
        self._batch = min(deletes.tuning.batch_files, most_keys)
        self._observer = deletes.observer
        # A connection per request slot, and two for the single-object calls beside them.
        self._max_connections = deletes.concurrency + 2

    def delete(self, uris: list[str]) -> DeleteOutcome:
        groups: dict[Group, list[tuple[str, str]]] = defaultdict(list)
        for uri in uris:
            group, key = self._address(uri)
            groups[group].append((key, uri))
        return in_batches(self._pool, groups, self._batch, self._delete_batch)

    def _rounds(self, bucket: str) -> Rounds:
        """The retry loop's settings for one bucket's batch (its rate budget is per bucket)."""
        return Rounds(self._max_attempts, self._limits, bucket, self._observer)

    @abstractmethod
    def _address(self, uri: str) -> tuple[Group, str]:
        """The URI's group and its key there."""

    @abstractmethod
    def _delete_batch(self, group: Group, keys: list[tuple[str, str]]) -> DeleteOutcome:
        """One batch of (key, URI) pairs of one group, each recorded in the outcome."""
