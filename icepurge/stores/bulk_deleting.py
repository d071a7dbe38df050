"""A store's delete_many: through a bulk deleter the store builds on its first bulk delete, since
a store opened only to read (a plan's manifests, the guard's metadata) never needs one."""

from __future__ import annotations

from abc import ABC, abstractmethod
from functools import cached_property
from typing import Protocol

from icepurge.stores.outcomes import DeleteOutcome


class BulkDeleter(Protocol):
    def delete(self, uris: list[str]) -> DeleteOutcome:
        """A file already gone counts as missing, not failed."""


class BulkDeleting(ABC):
    @abstractmethod
    def _bulk_deleter(self) -> BulkDeleter: ...

    @cached_property
    def _deleter(self) -> BulkDeleter:
        return self._bulk_deleter()

    def delete_many(self, uris: list[str]) -> DeleteOutcome:
        return self._deleter.delete(uris)
