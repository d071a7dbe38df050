"""Deletes many files at once: S3 DeleteObjects in batches of 1000, local files in slices, other
stores through PyIceberg's FileIO on a thread pool. A file that is already gone counts as deleted.

Retries are ours, not boto3's, so that throttling (503 SlowDown) is seen and counted, and every
attempt waits for the purge's per-bucket rate budget."""

from __future__ import annotations

import os
import time
from collections import defaultdict
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from botocore.exceptions import BotoCoreError, ClientError, HTTPClientError
from botocore.exceptions import ConnectionError as BotoConnectionError
from pyiceberg.io import FileIO

from icepurge.activities.backoff import full_jitter
from icepurge.activities.rate_budget import BucketRateLimits

if TYPE_CHECKING:
    from mypy_boto3_s3 import S3Client

S3_BATCH = 1000
_THROTTLE_CODES = frozenset(
    {
        "SlowDown",
        "ServiceUnavailable",
        "Throttling",
        "ThrottlingException",
        "RequestLimitExceeded",
        "TooManyRequests",
    }
)
# Other 5xx answers are retried by their status code (see _retryable).
_TRANSIENT_CODES = _THROTTLE_CODES | {"InternalError", "RequestTimeout"}

# Hears each delete request's latency in seconds (the worker's metrics); None = nobody listens.
LatencyObserver = Callable[[float], None] | None


def observed(observer: LatencyObserver, started: float) -> None:
    if observer is not None:
        observer(time.monotonic() - started)


@dataclass(frozen=True)
class DeleteTuning:
    """How deletes are sent: attempts per request (5xx, SlowDown) and keys per bulk request
    (S3 takes up to 1000; some S3-compatible stores take fewer)."""

    max_attempts: int = 8
    batch_files: int = S3_BATCH
    # HEAD each key first: a bulk delete reports a key that was already gone as deleted.
    check_existence: bool = False


@dataclass
class RequestStats:
    """Delete requests sent, and how many of them the store throttled (then retried)."""

    requests: int = 0
    throttled: int = 0

    def add(self, other: RequestStats | DeleteOutcome) -> None:
        self.requests += other.requests
        self.throttled += other.throttled


@dataclass
class DeleteOutcome:
    deleted: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    failed: list[tuple[str, str]] = field(default_factory=list)
    requests: int = 0
    throttled: int = 0

    def merge(self, other: DeleteOutcome) -> None:
        self.deleted.extend(other.deleted)
        self.missing.extend(other.missing)
        self.failed.extend(other.failed)
        self.requests += other.requests
        self.throttled += other.throttled


def _error_code(error: ClientError) -> str:
    code = str(error.response.get("Error", {}).get("Code", ""))
    status = error.response.get("ResponseMetadata", {}).get("HTTPStatusCode")
    return "SlowDown" if status in (429, 503) and code not in _THROTTLE_CODES else code


def _retryable(error: Exception) -> bool:
    if isinstance(error, ClientError):
        status = error.response.get("ResponseMetadata", {}).get("HTTPStatusCode") or 0
        return _error_code(error) in _TRANSIENT_CODES or status >= 500
    return isinstance(error, HTTPClientError | BotoConnectionError)


def _throttled(error: Exception) -> bool:
    return isinstance(error, ClientError) and _error_code(error) in _THROTTLE_CODES


def _error_text(error: Exception) -> str:
    if isinstance(error, ClientError):
        details = error.response.get("Error", {})
        return f"{details.get('Code', 'ClientError')}: {details.get('Message', '')}".strip()
    return f"{type(error).__name__}: {error}"


class S3BulkDeleter:
    def __init__(
        self,
        client: S3Client,
        pool: ThreadPoolExecutor,
        limits: BucketRateLimits,
        tuning: DeleteTuning,
        observer: LatencyObserver = None,
    ) -> None:
        self._client = client
        self._pool = pool
        self._limits = limits
        self._max_attempts = tuning.max_attempts
        self._batch = tuning.batch_files
        self._check_existence = tuning.check_existence
        self._observer = observer

    def delete(self, uris: list[str]) -> DeleteOutcome:
        by_bucket: dict[str, list[tuple[str, str]]] = defaultdict(list)
        for uri in uris:
            parts = urlsplit(uri)
            by_bucket[parts.netloc].append((parts.path.lstrip("/"), uri))
        batches = [
            (bucket, keys[start : start + self._batch])
            for bucket, keys in by_bucket.items()
            for start in range(0, len(keys), self._batch)
        ]
        outcome = DeleteOutcome()
        for result in self._pool.map(lambda batch: self._delete_batch(*batch), batches):
            outcome.merge(result)
        return outcome

    def _delete_batch(self, bucket: str, keys: list[tuple[str, str]]) -> DeleteOutcome:
        outcome = DeleteOutcome()
        uri_of = dict(keys)
        remaining = (
            self._existing(bucket, list(uri_of), uri_of, outcome) if self._check_existence else list(uri_of)
        )
        if not remaining:
            return outcome
        for attempt in range(self._max_attempts):
            last_attempt = attempt + 1 == self._max_attempts
            self._limits.acquire(bucket)
            outcome.requests += 1
            started = time.monotonic()
            try:
                response = self._client.delete_objects(
                    Bucket=bucket,
                    Delete={"Objects": [{"Key": key} for key in remaining], "Quiet": True},
                )
            except (ClientError, BotoCoreError) as error:
                observed(self._observer, started)
                if not _retryable(error) or last_attempt:
                    outcome.failed.extend((uri_of[key], _error_text(error)) for key in remaining)
                    return outcome
                outcome.throttled += _throttled(error)
                time.sleep(full_jitter(attempt, 0.2, 8.0))
                continue
            observed(self._observer, started)
            remaining = self._settle(response.get("Errors", []), remaining, uri_of, outcome, last_attempt)
            if not remaining:
                break
            time.sleep(full_jitter(attempt, 0.2, 8.0))
        return outcome

    def _existing(
        self, bucket: str, keys: list[str], uri_of: dict[str, str], outcome: DeleteOutcome
    ) -> list[str]:
        """The keys a HEAD finds (or can't tell about: the delete will); the absent ones are
        recorded as already missing."""
        present: list[str] = []
        for key in keys:
            self._limits.acquire(bucket)
            outcome.requests += 1
            try:
                self._client.head_object(Bucket=bucket, Key=key)
            except ClientError as error:
                status = error.response.get("ResponseMetadata", {}).get("HTTPStatusCode")
                if status == 404:
                    outcome.missing.append(uri_of[key])
                    continue
            except BotoCoreError:
                pass
            present.append(key)
        return present

    @staticmethod
    def _settle(
        errors: list[Any], keys: list[str], uri_of: dict[str, str], outcome: DeleteOutcome, last_attempt: bool
    ) -> list[str]:
        """Records each key's result; returns the keys to send again."""
        by_key = {item["Key"]: item for item in errors if "Key" in item}
        retry: list[str] = []
        for key in keys:
            key_error = by_key.get(key)
            code = key_error.get("Code") if key_error else None
            if key_error is None:
                outcome.deleted.append(uri_of[key])
            elif code == "NoSuchKey":
                outcome.missing.append(uri_of[key])
            elif code in _TRANSIENT_CODES and not last_attempt:
                retry.append(key)
            else:
                outcome.failed.append((uri_of[key], f"{code}: {key_error.get('Message', '')}"))
        if any(by_key[key].get("Code") in _THROTTLE_CODES for key in retry):
            outcome.throttled += 1
        return retry


class FileIODeleter:
    """Stores without a bulk API: one delete per file, in parallel."""

    def __init__(
        self, io: FileIO, pool: ThreadPoolExecutor, limits: BucketRateLimits, observer: LatencyObserver = None
    ) -> None:
        self._io = io
        self._pool = pool
        self._limits = limits
        self._observer = observer

    def delete(self, uris: list[str]) -> DeleteOutcome:
        outcome = DeleteOutcome()
        for result in self._pool.map(self._delete_one, uris):
            outcome.merge(result)
        return outcome

    def _delete_one(self, uri: str) -> DeleteOutcome:
        self._limits.acquire(urlsplit(uri).netloc)
        started = time.monotonic()
        try:
            self._io.delete(uri)
        except FileNotFoundError:
            return DeleteOutcome(missing=[uri], requests=1)
        except OSError as error:
            return DeleteOutcome(failed=[(uri, _error_text(error))], requests=1)
        finally:
            observed(self._observer, started)
        return DeleteOutcome(deleted=[uri], requests=1)


class LocalBulkDeleter:
    """The local disk: each pool task unlinks a whole slice of the files (os.unlink releases the
    GIL for its system call), instead of one FileIO call, with its own bookkeeping, per file.
    Each unlink counts as a request; the latency observed is a slice's."""

    def __init__(
        self,
        pool: ThreadPoolExecutor,
        slices: int,
        limits: BucketRateLimits,
        observer: LatencyObserver = None,
    ) -> None:
        self._pool = pool
        self._slices = slices
        self._limits = limits
        self._observer = observer

    def delete(self, uris: list[str]) -> DeleteOutcome:
        outcome = DeleteOutcome()
        if not uris:
            return outcome
        size = -(-len(uris) // self._slices)
        for part in self._pool.map(
            self._unlink_all, [uris[at : at + size] for at in range(0, len(uris), size)]
        ):
            outcome.merge(part)
        return outcome

    def _unlink_all(self, uris: list[str]) -> DeleteOutcome:
        outcome = DeleteOutcome(requests=len(uris))
        started = time.monotonic()
        for uri in uris:
            self._limits.acquire("")
            try:
                os.unlink(local_path(uri))
            except FileNotFoundError:
                outcome.missing.append(uri)
            except OSError as error:
                outcome.failed.append((uri, f"{type(error).__name__}: {error.strerror or error}"))
            else:
                outcome.deleted.append(uri)
        observed(self._observer, started)
        return outcome


def local_path(uri: str) -> str:
    """Where PyIceberg's FileIO would look: file://host/p is host/p, a bare path is absolute."""
    if uri.startswith("file://") and "?" not in uri and "#" not in uri:
        # What urlsplit would give, at a fraction of its cost per file.
        return uri[len("file://") :]
    if "://" not in uri:
        return os.path.abspath(uri)
    parts = urlsplit(uri)
    return f"{parts.netloc}{parts.path}"
