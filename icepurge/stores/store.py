"""What every store does for icepurge: read, write and delete one object, delete many at once,
list a page, head. One implementation per kind of store (s3.py, azure.py, local.py, fileio.py),
chosen by registry.py from the URI's scheme.

Errors come out as the FileIO's would: FileNotFoundError for a 404, PermissionError for a 403,
an OSError naming the store's code for anything else."""

from __future__ import annotations

from concurrent.futures import Executor
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Protocol

from temporalio.exceptions import ApplicationError

from icepurge.stores.outcomes import DeleteOutcome, DeleteTuning, LatencyObserver
from icepurge.stores.rate_budget import BucketRateLimits

if TYPE_CHECKING:
    from pyiceberg.io import FileIO

ERROR_LISTING_UNSUPPORTED = "ListingUnsupported"


@dataclass(frozen=True)
class Listed:
    uri: str
    modified: datetime


@dataclass(frozen=True)
class ListedPage:
    """One page of a listing: objects, the folders at that level (a flat listing only), and the
    token for the next page (None: the listing is complete)."""

    objects: list[Listed]
    folders: list[str]
    next_token: str | None


@dataclass(frozen=True)
class ObjectHead:
    size: int
    modified: datetime


@dataclass(frozen=True)
class Deletes:
    """What bulk deletes run with: a pool to send them on, the purge's per-bucket rate budget."""

    pool: Executor
    limits: BucketRateLimits
    tuning: DeleteTuning
    concurrency: int
    observer: LatencyObserver = None


# Whole-object reads at once per process and store (a plan's manifests, the guard's metadata
# files): the connection pool of the client they share.
READ_CONNECTIONS = 16


@dataclass(frozen=True)
class StoreContext:
    """The FileIO properties (credentials included: never logged), requests at once and
    attempts per single-object request; `deletes` for a store that deletes in bulk; `file_io`
    when the caller has one already (PyIceberg's takes most of a second to build)."""

    properties: dict[str, str]
    connections: int = 16
    attempts: int = 3
    deletes: Deletes | None = None
    file_io: FileIO | None = field(default=None, compare=False)

    def bulk(self) -> Deletes:
        if self.deletes is None:
            raise RuntimeError("this store was opened for single-object requests, not bulk deletes")
        return self.deletes


class ListingUnsupportedError(ApplicationError):
    def __init__(self, uri: str) -> None:
        super().__init__(
            f"{uri.partition('://')[0]}:// can't be listed through icepurge's stores",
            type=ERROR_LISTING_UNSUPPORTED,
            non_retryable=True,
        )


class Store(Protocol):
    def read(self, uri: str) -> bytes: ...

    def write(self, uri: str, data: bytes) -> None: ...

    def delete(self, uri: str) -> None:
        """Deleting an absent object succeeds."""

    def delete_many(self, uris: list[str]) -> DeleteOutcome:
        """A file already gone counts as missing, not failed."""

    def list_page(self, prefix: str, token: str | None, limit: int, flat: bool) -> ListedPage:
        """Objects under `prefix` (a folder), in key order; `flat` stops at its own level."""

    def head(self, uri: str) -> ObjectHead | None:
        """None when the object does not exist."""
