"""Stores without a bulk API, through PyIceberg's FileIO: one delete per file, in parallel."""

from __future__ import annotations

import time
from urllib.parse import urlsplit

from pyiceberg.io import FileIO

from icepurge.stores.outcomes import DeleteOutcome, observed
from icepurge.stores.store import Deletes


class FileIODeleter:
    def __init__(self, io: FileIO, bulk: Deletes) -> None:
        self._io = io
        self._bulk = bulk

    def delete(self, uris: list[str]) -> DeleteOutcome:
        outcome = DeleteOutcome()
        for result in self._bulk.pool.map(self._delete_one, uris):
            outcome.merge(result)
        return outcome

    def _delete_one(self, uri: str) -> DeleteOutcome:
        self._bulk.limits.acquire(urlsplit(uri).netloc)
        started = time.monotonic()
        try:
            self._io.delete(uri)
        except FileNotFoundError:
            return DeleteOutcome(missing=[uri], requests=1)
        except OSError as error:
            return DeleteOutcome(failed=[(uri, f"{type(error).__name__}: {error}")], requests=1)
        finally:
            observed(self._bulk.observer, started)
        return DeleteOutcome(deleted=[uri], requests=1)
