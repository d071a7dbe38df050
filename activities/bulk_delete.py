"""Deletes many files at once: S3 DeleteObjects in batches of 1000, other stores through
PyIceberg's FileIO on a thread pool. A file that is already gone counts as deleted."""

from __future__ import annotations

import random
import time
from collections import defaultdict
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from botocore.exceptions import BotoCoreError, ClientError
from pyiceberg.io import FileIO, load_file_io

from activities.locations import S3_SCHEMES, scheme_of
from activities.s3_client import s3_client

if TYPE_CHECKING:
    from mypy_boto3_s3 import S3Client

S3_BATCH = 1000
_TRANSIENT_KEY_ERRORS = frozenset({"InternalError", "SlowDown", "ServiceUnavailable", "RequestTimeout"})
_KEY_RETRIES = 4


@dataclass
class DeleteOutcome:
    deleted: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    failed: list[tuple[str, str]] = field(default_factory=list)
    requests: int = 0

    def merge(self, other: DeleteOutcome) -> None:
        self.deleted.extend(other.deleted)
        self.missing.extend(other.missing)
        self.failed.extend(other.failed)
        self.requests += other.requests


def _backoff(attempt: int) -> float:
    return random.uniform(0, min(8.0, 0.2 * 2**attempt))


def _error_text(error: Exception) -> str:
    if isinstance(error, ClientError):
        details = error.response.get("Error", {})
        return f"{details.get('Code', 'ClientError')}: {details.get('Message', '')}".strip()
    return f"{type(error).__name__}: {error}"


class S3BulkDeleter:
    def __init__(self, client: S3Client, pool: ThreadPoolExecutor) -> None:
        self._client = client
        self._pool = pool

    def delete(self, uris: list[str]) -> DeleteOutcome:
        by_bucket: dict[str, list[tuple[str, str]]] = defaultdict(list)
        for uri in uris:
            parts = urlsplit(uri)
            by_bucket[parts.netloc].append((parts.path.lstrip("/"), uri))
        batches = [
            (bucket, keys[start : start + S3_BATCH])
            for bucket, keys in by_bucket.items()
            for start in range(0, len(keys), S3_BATCH)
        ]
        outcome = DeleteOutcome()
        for result in self._pool.map(lambda batch: self._delete_batch(*batch), batches):
            outcome.merge(result)
        return outcome

    def _delete_batch(self, bucket: str, keys: list[tuple[str, str]]) -> DeleteOutcome:
        outcome = DeleteOutcome()
        uri_of = dict(keys)
        remaining = list(uri_of)
        for attempt in range(_KEY_RETRIES):
            outcome.requests += 1
            try:
                response = self._client.delete_objects(
                    Bucket=bucket,
                    Delete={"Objects": [{"Key": key} for key in remaining], "Quiet": True},
                )
            except (ClientError, BotoCoreError) as error:
                # boto3 already retried the request itself (standard mode); the keys have failed.
                outcome.failed.extend((uri_of[key], _error_text(error)) for key in remaining)
                return outcome
            errors = {item["Key"]: item for item in response.get("Errors", []) if "Key" in item}
            retry: list[str] = []
            for key in remaining:
                key_error = errors.get(key)
                if key_error is None:
                    outcome.deleted.append(uri_of[key])
                elif key_error.get("Code") == "NoSuchKey":
                    outcome.missing.append(uri_of[key])
                elif key_error.get("Code") in _TRANSIENT_KEY_ERRORS and attempt + 1 < _KEY_RETRIES:
                    retry.append(key)
                else:
                    reason = f"{key_error.get('Code')}: {key_error.get('Message', '')}"
                    outcome.failed.append((uri_of[key], reason))
            if not retry:
                break
            remaining = retry
            time.sleep(_backoff(attempt))
        return outcome


class FileIODeleter:
    """Stores without a bulk API: one delete per file, in parallel."""

    def __init__(self, io: FileIO, pool: ThreadPoolExecutor) -> None:
        self._io = io
        self._pool = pool

    def delete(self, uris: list[str]) -> DeleteOutcome:
        outcome = DeleteOutcome()
        for result in self._pool.map(self._delete_one, uris):
            outcome.merge(result)
        return outcome

    def _delete_one(self, uri: str) -> DeleteOutcome:
        try:
            self._io.delete(uri)
        except FileNotFoundError:
            return DeleteOutcome(missing=[uri], requests=1)
        except OSError as error:
            return DeleteOutcome(failed=[(uri, _error_text(error))], requests=1)
        return DeleteOutcome(deleted=[uri], requests=1)


class ObjectStore:
    """Routes each file to the deleter for its scheme; one per activity, closed after use."""

    def __init__(self, properties: dict[str, str], concurrency: int, max_attempts: int = 8) -> None:
        self._properties = properties
        self._max_attempts = max_attempts
        self._pool = ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix="icepurge-delete")
        self._concurrency = concurrency
        self._s3: S3BulkDeleter | None = None
        self._fileio: dict[str, FileIODeleter] = {}

    def __enter__(self) -> ObjectStore:
        return self

    def __exit__(self, *_: object) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)

    def delete(self, uris: Iterable[str]) -> DeleteOutcome:
        by_scheme: dict[str, list[str]] = defaultdict(list)
        for uri in uris:
            by_scheme[scheme_of(uri)].append(uri)
        outcome = DeleteOutcome()
        for scheme, group in by_scheme.items():
            outcome.merge(self._deleter(scheme, group[0]).delete(group))
        return outcome

    def _deleter(self, scheme: str, sample: str) -> S3BulkDeleter | FileIODeleter:
        if scheme in S3_SCHEMES:
            if self._s3 is None:
                client = s3_client(
                    self._properties, max_connections=self._concurrency + 2, max_attempts=self._max_attempts
                )
                self._s3 = S3BulkDeleter(client, self._pool)
            return self._s3
        if scheme not in self._fileio:
            self._fileio[scheme] = FileIODeleter(load_file_io(self._properties, sample), self._pool)
        return self._fileio[scheme]
