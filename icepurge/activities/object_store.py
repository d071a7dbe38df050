"""Routes each file to the deleter for its store: S3's and Azure's bulk APIs, the local disk in
slices, any other scheme through PyIceberg's FileIO."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING

from pyiceberg.io import load_file_io

from icepurge.activities.blob_address import AZURE_SCHEMES
from icepurge.activities.bulk_delete import (
    DeleteOutcome,
    DeleteTuning,
    FileIODeleter,
    LatencyObserver,
    LocalBulkDeleter,
    S3BulkDeleter,
)
from icepurge.activities.locations import S3_SCHEMES, scheme_of
from icepurge.activities.rate_budget import BucketRateLimits
from icepurge.activities.s3_client import s3_client

LOCAL_SCHEME = "file"

if TYPE_CHECKING:
    from icepurge.activities.azure_bulk_delete import AzureBatchDeleter


class ObjectStore:
    """Routes each file to the deleter for its scheme; one per activity, closed after use."""

    def __init__(
        self,
        properties: dict[str, str],
        concurrency: int,
        tuning: DeleteTuning,
        requests_per_second: float | None = None,
        observer: LatencyObserver = None,
    ) -> None:
        self._properties = properties
        self._observer = observer
        self._tuning = tuning
        self._limits = BucketRateLimits(requests_per_second)
        self._pool = ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix="icepurge-delete")
        self._concurrency = concurrency
        self._s3: S3BulkDeleter | None = None
        self._fileio: dict[str, FileIODeleter] = {}
        self._local: LocalBulkDeleter | None = None
        self._azure: AzureBatchDeleter | None = None

    def __enter__(self) -> ObjectStore:
        return self

    def __exit__(self, *_: object) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)
        self._limits.close()

    def delete(self, uris: Iterable[str]) -> DeleteOutcome:
        by_scheme: dict[str, list[str]] = defaultdict(list)
        for uri in uris:
            by_scheme[scheme_of(uri)].append(uri)
        outcome = DeleteOutcome()
        for scheme, group in by_scheme.items():
            outcome.merge(self._deleter(scheme, group[0]).delete(group))
        return outcome

    def _deleter(
        self, scheme: str, sample: str
    ) -> S3BulkDeleter | LocalBulkDeleter | AzureBatchDeleter | FileIODeleter:
        if scheme in S3_SCHEMES:
            if self._s3 is None:
                client = s3_client(self._properties, max_connections=self._concurrency + 2, max_attempts=1)
                self._s3 = S3BulkDeleter(client, self._pool, self._limits, self._tuning, self._observer)
            return self._s3
        if scheme in AZURE_SCHEMES:
            if self._azure is None:
                # Here rather than at the top: the Azure SDK takes half a second to import.
                from icepurge.activities.azure_bulk_delete import AzureBatchDeleter

                self._azure = AzureBatchDeleter(
                    self._properties,
                    self._pool,
                    self._limits,
                    self._tuning,
                    self._observer,
                    max_connections=self._concurrency + 2,
                )
            return self._azure
        if scheme == LOCAL_SCHEME:
            if self._local is None:
                self._local = LocalBulkDeleter(self._pool, self._concurrency, self._limits, self._observer)
            return self._local
        if scheme not in self._fileio:
            self._fileio[scheme] = FileIODeleter(
                load_file_io(self._properties, sample), self._pool, self._limits, self._observer
            )
        return self._fileio[scheme]
