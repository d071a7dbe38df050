"""Azure Blob Storage deletes with the Blob Batch API: up to 256 deletes per request, each
answered on its own (202 deleted, 404 already gone), so the counts are exact.

Retries are ours, as on S3: a throttled (503, 429) or failed (5xx, reset) request or sub-request is
sent again after a jittered wait, counted, and waits for the purge's rate budget each time."""

from __future__ import annotations

from typing import Any

from azure.core.exceptions import AzureError, HttpResponseError, ServiceRequestError, ServiceResponseError

from icepurge.stores.azure_client import blob_service, safe_message
from icepurge.stores.batch_deleter import BatchDeleter
from icepurge.stores.blob_address import blob_address
from icepurge.stores.bulk_rounds import BulkRequest, CallAnswer, RequestFailure, delete_through, settle_each
from icepurge.stores.outcomes import DeleteOutcome
from icepurge.stores.store import Deletes

# The Blob Batch API's limit on sub-requests per batch.
AZURE_BATCH = 256
_DELETED = frozenset({202})


def _request_status(error: AzureError) -> int:
    """A request that failed as a whole: its HTTP status, or 503 for a connection that broke
    (both are sent again)."""
    if isinstance(error, ServiceRequestError | ServiceResponseError):
        return 503
    return int(getattr(error, "status_code", 0) or 0)


def _error_text(error: AzureError) -> str:
    code = getattr(error, "error_code", None) if isinstance(error, HttpResponseError) else None
    return f"{code or type(error).__name__}: {safe_message(error)}"


class AzureBatchDeleter(BatchDeleter[tuple[str | None, str]]):
    def __init__(self, properties: dict[str, str], deletes: Deletes) -> None:
        super().__init__(deletes, AZURE_BATCH)
        self._properties = properties

    def _address(self, uri: str) -> tuple[tuple[str | None, str], str]:
        address = blob_address(uri)
        return (address.account, address.container), address.name

    def _delete_batch(self, where: tuple[str | None, str], names: list[tuple[str, str]]) -> DeleteOutcome:
        account, container = where

        def connect() -> BulkRequest[list[Any]]:
            service = blob_service(self._properties, account, self._max_connections)
            client = service.get_container_client(container)
            return BulkRequest(
                send=lambda batch: list(client.delete_blobs(*batch, raise_on_any_failure=False)),
                errors=(AzureError,),
                failure=_request_failure,
                settle=settle_each(_DELETED, _calls),
            )

        return delete_through(dict(names), connect, self._rounds(f"{account or ''}/{container}"))


def _request_failure(error: Exception) -> RequestFailure:
    status = _request_status(error) if isinstance(error, AzureError) else 0
    text = _error_text(error) if isinstance(error, AzureError) else str(error)
    return RequestFailure.of_status(text, status)


def _calls(answers: list[Any]) -> list[CallAnswer]:
    """Each sub-request's answer: 202 deleted."""
    return [
        CallAnswer(
            answer.status_code,
            f"{answer.headers.get('x-ms-error-code') or answer.reason}: HTTP {answer.status_code}",
        )
        for answer in answers
    ]
