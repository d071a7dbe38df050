"""Azure Blob Storage deletes with the Blob Batch API: up to 256 deletes per request, each
answered on its own (202 deleted, 404 already gone), so the counts are exact.

Retries are ours, as on S3: a throttled (503, 429) or failed (5xx, reset) request or sub-request is
sent again after a jittered wait, counted, and waits for the purge's rate budget each time."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from azure.core.exceptions import AzureError, HttpResponseError, ServiceRequestError, ServiceResponseError

from icepurge.stores.azure_client import blob_service, safe_message
from icepurge.stores.blob_address import blob_address
from icepurge.stores.bulk_rounds import (
    BulkRequest,
    RequestFailure,
    Rounds,
    Settled,
    delete_in_rounds,
    in_batches,
)
from icepurge.stores.outcomes import DeleteOutcome
from icepurge.stores.store import Deletes

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
    def __init__(self, properties: dict[str, str], deletes: Deletes) -> None:
        self._properties = properties
        self._pool = deletes.pool
        self._limits = deletes.limits
        self._max_attempts = deletes.tuning.max_attempts
        self._batch = min(deletes.tuning.batch_files, AZURE_BATCH)
        self._observer = deletes.observer
        # A connection per request slot, and two for the single-object calls beside them.
        self._max_connections = deletes.concurrency + 2

    def delete(self, uris: list[str]) -> DeleteOutcome:
        by_container: dict[tuple[str | None, str], list[tuple[str, str]]] = defaultdict(list)
        for uri in uris:
            address = blob_address(uri)
            by_container[(address.account, address.container)].append((address.name, uri))
        return in_batches(self._pool, by_container, self._batch, self._delete_batch)

    def _delete_batch(self, where: tuple[str | None, str], names: list[tuple[str, str]]) -> DeleteOutcome:
        account, container = where
        outcome = DeleteOutcome()
        uri_of = dict(names)
        try:
            client = blob_service(self._properties, account, self._max_connections).get_container_client(
                container
            )
        except OSError as error:
            outcome.failed.extend((uri, str(error)) for uri in uri_of.values())
            return outcome
        request = BulkRequest(
            send=lambda batch: list(client.delete_blobs(*batch, raise_on_any_failure=False)),
            errors=(AzureError,),
            failure=_request_failure,
            settle=_settle,
        )
        rounds = Rounds(self._max_attempts, self._limits, f"{account or ''}/{container}", self._observer)
        return delete_in_rounds(request, list(uri_of), uri_of, rounds, outcome)


def _request_failure(error: Exception) -> RequestFailure:
    status = _request_status(error) if isinstance(error, AzureError) else 0
    text = _error_text(error) if isinstance(error, AzureError) else str(error)
    return RequestFailure(text, _retryable(status), status in _THROTTLED)


def _settle(
    answers: list[Any], names: list[str], uri_of: dict[str, str], outcome: DeleteOutcome, last_attempt: bool
) -> Settled:
    """Each sub-request answered on its own: 202 deleted, 404 already gone, 429/5xx sent again."""
    retry: list[str] = []
    for name, answer in zip(names, answers, strict=True):
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
    return Settled(retry, bool(retry))
