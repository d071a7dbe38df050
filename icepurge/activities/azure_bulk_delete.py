"""Azure Blob Storage deletes with the Blob Batch API: up to 256 deletes per request, each
answered on its own (202 deleted, 404 already gone), so the counts are exact.

Retries are ours, as on S3: a throttled (503, 429) or failed (5xx, reset) request or sub-request is
sent again after a jittered wait, counted, and waits for the purge's rate budget each time."""

from __future__ import annotations

import time
from collections import defaultdict
from concurrent.futures import ThreadPoolExecutor

from azure.core.exceptions import AzureError, HttpResponseError, ServiceRequestError, ServiceResponseError

from icepurge.activities.azure_client import blob_service, safe_message
from icepurge.activities.backoff import full_jitter
from icepurge.activities.blob_address import blob_address
from icepurge.activities.bulk_delete import DeleteOutcome, DeleteTuning, LatencyObserver, observed
from icepurge.activities.rate_budget import BucketRateLimits

# The Blob Batch API's limit on sub-requests per batch.
AZURE_BATCH = 256
_DELETED, _MISSING = 202, 404
_THROTTLED = frozenset({429, 503})


def _retryable(status: int) -> bool:
    return status in _THROTTLED or status >= 500


def _request_status(error: AzureError) -> int:
    """A request that failed as a whole: its HTTP status, or 503 for a connection that broke
    (both are sent again)."""
    if isinstance(error, ServiceRequestError | ServiceResponseError):
        return 503
    return int(getattr(error, "status_code", 0) or 0)


def _error_text(error: AzureError) -> str:
    code = getattr(error, "error_code", None) if isinstance(error, HttpResponseError) else None
    return f"{code or type(error).__name__}: {safe_message(error)}"


class AzureBatchDeleter:
    def __init__(
        self,
        properties: dict[str, str],
        pool: ThreadPoolExecutor,
        limits: BucketRateLimits,
        tuning: DeleteTuning,
        observer: LatencyObserver = None,
        *,
        max_connections: int = 16,
    ) -> None:
        self._properties = properties
        self._pool = pool
        self._limits = limits
        self._max_attempts = tuning.max_attempts
        self._batch = min(tuning.batch_files, AZURE_BATCH)
        self._observer = observer
        self._max_connections = max_connections

    def delete(self, uris: list[str]) -> DeleteOutcome:
        by_container: dict[tuple[str | None, str], list[tuple[str, str]]] = defaultdict(list)
        for uri in uris:
            address = blob_address(uri)
            by_container[(address.account, address.container)].append((address.name, uri))
        batches = [
            (account, container, names[start : start + self._batch])
            for (account, container), names in by_container.items()
            for start in range(0, len(names), self._batch)
        ]
        outcome = DeleteOutcome()
        for result in self._pool.map(lambda batch: self._delete_batch(*batch), batches):
            outcome.merge(result)
        return outcome

    def _delete_batch(
        self, account: str | None, container: str, names: list[tuple[str, str]]
    ) -> DeleteOutcome:
        outcome = DeleteOutcome()
        uri_of = dict(names)
        remaining = list(uri_of)
        bucket = f"{account or ''}/{container}"
        try:
            client = blob_service(self._properties, account, self._max_connections).get_container_client(
                container
            )
        except OSError as error:
            outcome.failed.extend((uri, str(error)) for uri in uri_of.values())
            return outcome
        for attempt in range(self._max_attempts):
            last_attempt = attempt + 1 == self._max_attempts
            self._limits.acquire(bucket)
            outcome.requests += 1
            started = time.monotonic()
            try:
                answers = list(client.delete_blobs(*remaining, raise_on_any_failure=False))
            except AzureError as error:
                observed(self._observer, started)
                status = _request_status(error)
                if not _retryable(status) or last_attempt:
                    outcome.failed.extend((uri_of[name], _error_text(error)) for name in remaining)
                    return outcome
                outcome.throttled += status in _THROTTLED
                time.sleep(full_jitter(attempt, 0.2, 8.0))
                continue
            observed(self._observer, started)
            retry: list[str] = []
            for name, answer in zip(remaining, answers, strict=True):
                status = answer.status_code
                if status == _DELETED:
                    outcome.deleted.append(uri_of[name])
                elif status == _MISSING:
                    outcome.missing.append(uri_of[name])
                elif _retryable(status) and not last_attempt:
                    retry.append(name)
                else:
                    code = answer.headers.get("x-ms-error-code") or answer.reason
                    outcome.failed.append((uri_of[name], f"{code}: HTTP {status}"))
            if not retry:
                break
            outcome.throttled += 1
            remaining = retry
            time.sleep(full_jitter(attempt, 0.2, 8.0))
        return outcome
