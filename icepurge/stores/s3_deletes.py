"""S3 DeleteObjects in batches (1000 keys by default). Retries are ours, not boto3's, so that
throttling (503 SlowDown) is seen and counted, and every attempt waits for the purge's
per-bucket rate budget."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from botocore.exceptions import BotoCoreError, ClientError, HTTPClientError
from botocore.exceptions import ConnectionError as BotoConnectionError

from icepurge.stores.addresses import bucket_and_key
from icepurge.stores.batch_deleter import BatchDeleter
from icepurge.stores.bulk_rounds import (
    BulkRequest,
    RequestFailure,
    Settled,
    delete_in_rounds,
)
from icepurge.stores.outcomes import S3_BATCH, DeleteOutcome
from icepurge.stores.store import Deletes

if TYPE_CHECKING:
    from mypy_boto3_s3 import S3Client

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


# S3's own limit for one listing page.
LISTING_PAGE_KEYS = 1000


def _request_failure(error: Exception) -> RequestFailure:
    return RequestFailure(_error_text(error), _retryable(error), _throttled(error))


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


# One DeleteObjects: the bucket and its keys in, boto3's answer out (`{"Errors": [...]}`).
DeleteObjects = Callable[[str, list[str]], Any]


def boto3_delete_objects(client: S3Client) -> DeleteObjects:
    return lambda bucket, keys: client.delete_objects(
        Bucket=bucket, Delete={"Objects": [{"Key": key} for key in keys], "Quiet": True}
    )


class S3BulkDeleter(BatchDeleter[str]):
    def __init__(
        self,
        client: S3Client,
        send: DeleteObjects,
        bulk: Deletes,
    ) -> None:
        """`client` lists and heads where existence is checked first; `send` deletes."""
        super().__init__(bulk, S3_BATCH)
        self._client = client
        self._send = send
        self._check_existence = bulk.tuning.check_existence

    def _address(self, uri: str) -> tuple[str, str]:
        return bucket_and_key(uri)

    def _delete_batch(self, bucket: str, keys: list[tuple[str, str]]) -> DeleteOutcome:
        outcome = DeleteOutcome()
        uri_of = dict(keys)
        remaining = (
            self._existing(bucket, list(uri_of), uri_of, outcome) if self._check_existence else list(uri_of)
        )
        if not remaining:
            return outcome
        request = BulkRequest(
            send=lambda batch: self._send(bucket, batch),
            errors=(ClientError, BotoCoreError),
            failure=_request_failure,
            settle=_settle,
        )
        return delete_in_rounds(request, remaining, uri_of, self._rounds(bucket), outcome)

    def _existing(
        self, bucket: str, keys: list[str], uri_of: dict[str, str], outcome: DeleteOutcome
    ) -> list[str]:
        """The keys the store holds (or can't tell about: the delete will); the absent ones are
        recorded as already missing. A folder whose keys one listing page holds answers for all
        of its keys in one request (a catalog that deleted the storage leaves empty folders);
        a bigger one is asked key by key."""
        by_folder: dict[str, list[str]] = defaultdict(list)
        for key in keys:
            by_folder[key[: key.rfind("/") + 1]].append(key)
        present: list[str] = []
        for folder, folder_keys in by_folder.items():
            listed = self._listed(bucket, folder, outcome) if len(folder_keys) > 1 else None
            if listed is None:
                present += self._headed(bucket, folder_keys, uri_of, outcome)
                continue
            for key in folder_keys:
                if key in listed:
                    present.append(key)
                else:
                    outcome.missing.append(uri_of[key])
        return present

    def _listed(self, bucket: str, folder: str, outcome: DeleteOutcome) -> set[str] | None:
        """The folder's own keys when one page holds them all; None when it doesn't or the
        listing fails."""
        self._limits.acquire(bucket)
        outcome.requests += 1
        try:
            page = self._client.list_objects_v2(
                Bucket=bucket, Prefix=folder, Delimiter="/", MaxKeys=LISTING_PAGE_KEYS
            )
        except (ClientError, BotoCoreError):
            return None
        if page.get("IsTruncated"):
            return None
        return {item["Key"] for item in page.get("Contents", [])}

    def _headed(
        self, bucket: str, keys: list[str], uri_of: dict[str, str], outcome: DeleteOutcome
    ) -> list[str]:
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


def _settle(
    response: Any, keys: list[str], uri_of: dict[str, str], outcome: DeleteOutcome, last_attempt: bool
) -> Settled:
    """Records each key's result; returns the keys to send again."""
    by_key = {item["Key"]: item for item in response.get("Errors", []) if "Key" in item}
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
    return Settled(retry, any(by_key[key].get("Code") in _THROTTLE_CODES for key in retry))
