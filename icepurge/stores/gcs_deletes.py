"""Google Cloud Storage deletes with the JSON API's batch endpoint: up to 100 deletes per request,
each answered on its own (204 deleted, 404 already gone), so the counts are exact. obstore has no
bulk delete for GCS: it would send a DELETE per object, and report a gone one as an error.

Retries are ours, as on S3: a throttled (429, 503) or failed (5xx, reset) request or sub-request
is sent again after a jittered wait, counted, and waits for the purge's rate budget each time."""

from __future__ import annotations

import re
import uuid
from email.parser import BytesParser
from email.policy import HTTP
from urllib.parse import quote

import httpx

from icepurge.stores.addresses import bucket_and_key
from icepurge.stores.batch_deleter import BatchDeleter
from icepurge.stores.bulk_rounds import BulkRequest, CallAnswer, RequestFailure, delete_through, settle_each
from icepurge.stores.gcs_client import gcs_access, json_client
from icepurge.stores.outcomes import DeleteOutcome
from icepurge.stores.store import Deletes

# The JSON API's limit on calls per batch request.
GCS_BATCH = 100
_DELETED = frozenset({200, 204})
_STATUS_LINE = re.compile(rb"^HTTP/1\.[01] (\d{3})", re.MULTILINE)
_CONTENT_ID = re.compile(r"<response-(\d+)>")


class BatchAnswerError(OSError):
    """A batch answer that isn't the multipart one asked for (a proxy's error page, say)."""


class GcsBatchDeleter(BatchDeleter[str]):
    def __init__(self, properties: dict[str, str], deletes: Deletes) -> None:
        super().__init__(deletes, GCS_BATCH)
        self._properties = properties

    def _address(self, uri: str) -> tuple[str, str]:
        return bucket_and_key(uri)

    def _delete_batch(self, bucket: str, names: list[tuple[str, str]]) -> DeleteOutcome:
        def connect() -> BulkRequest[list[int]]:
            endpoint = gcs_access(self._properties).endpoint
            client = json_client(self._properties, self._max_connections)
            return BulkRequest(
                send=lambda batch: _send_batch(client, endpoint, bucket, batch),
                errors=(httpx.HTTPError, BatchAnswerError),
                failure=_request_failure,
                settle=settle_each(_DELETED, _calls),
            )

        return delete_through(dict(names), connect, self._rounds(f"gs://{bucket}"))


def _send_batch(client: httpx.Client, endpoint: str, bucket: str, names: list[str]) -> list[int]:
    """Each name's status, in the order sent."""
    boundary = f"icepurge-{uuid.uuid4().hex}"
    # Each call is a whole HTTP request, its empty line included: the CRLF before the next
    # boundary belongs to the boundary.
    parts = [
        f"--{boundary}\r\nContent-Type: application/http\r\nContent-ID: <{index}>\r\n\r\n"
        f"DELETE /storage/v1/b/{quote(bucket, safe='')}/o/{quote(name, safe='')} HTTP/1.1\r\n\r\n\r\n"
        for index, name in enumerate(names)
    ]
    body = ("".join(parts) + f"--{boundary}--\r\n").encode()
    answer = client.post(
        f"{endpoint}/batch/storage/v1",
        content=body,
        headers={"Content-Type": f"multipart/mixed; boundary={boundary}"},
    )
    if answer.status_code != 200:
        raise httpx.HTTPStatusError(
            f"HTTP {answer.status_code} {answer.reason_phrase}", request=answer.request, response=answer
        )
    return _statuses(answer.headers.get("Content-Type", ""), answer.content, len(names))


def _statuses(content_type: str, content: bytes, count: int) -> list[int]:
    message = BytesParser(policy=HTTP).parsebytes(f"Content-Type: {content_type}\r\n\r\n".encode() + content)
    if not message.is_multipart():
        raise BatchAnswerError(f"the batch answer is not multipart ({content_type or 'no Content-Type'})")
    statuses: dict[int, int] = {}
    for part in message.iter_parts():
        index = _CONTENT_ID.search(str(part.get("Content-ID", "")))
        payload = part.get_payload(decode=True)
        status = _STATUS_LINE.search(payload) if isinstance(payload, bytes) else None
        if index is not None and status is not None:
            statuses[int(index.group(1))] = int(status.group(1))
    if set(statuses) != set(range(count)):
        raise BatchAnswerError(f"the batch answer holds {len(statuses)} of {count} calls' answers")
    return [statuses[index] for index in range(count)]


def _request_failure(error: Exception) -> RequestFailure:
    if not isinstance(error, httpx.HTTPStatusError):
        # No answer (a reset, a timeout) or an unreadable one: sent again.
        return RequestFailure(f"{type(error).__name__}: {error}", retryable=True, throttled=False)
    status = error.response.status_code
    text = f"HTTP {status}: {error.response.reason_phrase}"
    return RequestFailure.of_status(text, status)


def _calls(statuses: list[int]) -> list[CallAnswer]:
    """Each call's answer: 204 deleted."""
    return [CallAnswer(status, f"HTTP {status}") for status in statuses]
