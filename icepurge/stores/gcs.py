"""Google Cloud Storage (gs://, gcs://): whole-object reads and heads through obstore's GCS store
(the XML API), one request each; listings, uploads and single deletes through the JSON API
(obstore's listing fails on a name with an empty segment, its XML uploads are refused by
emulators, and its delete of a gone object is an error); bulk deletes as JSON API batches
(gcs_deletes).

The JSON API also takes what obstore can't: a name with an empty, "." or ".." segment (its own
object on GCS; obstore refuses it or drops the segment), and every request of a process forked
after its first obstore request."""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import datetime
from urllib.parse import quote

import httpx
import obstore
from obstore.store import GCSStore as ObstoreGcs

from icepurge.stores.addresses import bucket_and_key
from icepurge.stores.backoff import full_jitter
from icepurge.stores.bulk_deleting import BulkDeleting
from icepurge.stores.gcs_client import bucket_store, gcs_access, json_client
from icepurge.stores.gcs_deletes import GcsBatchDeleter
from icepurge.stores.obstore_runtime import forked_since_runtime, nameable, note_runtime_use, obstore_errors
from icepurge.stores.store import Listed, ListedPage, ObjectHead, StoreContext


class GcsStore(BulkDeleting):
    def __init__(self, context: StoreContext) -> None:
        self._context = context

    def read(self, uri: str) -> bytes:
        bucket, name = bucket_and_key(uri)
        if self._through_json(name):
            return self._json("GET", uri, query={"alt": "media"}).content
        with obstore_errors(uri):
            return obstore.get(self._bucket(bucket), name).bytes().to_bytes()

    def write(self, uri: str, data: bytes) -> None:
        bucket, name = bucket_and_key(uri)
        endpoint = gcs_access(self._context.properties).endpoint
        self._request(
            "POST",
            uri,
            f"{endpoint}/upload/storage/v1/b/{quote(bucket, safe='')}/o",
            query={"uploadType": "media", "name": name},
            data=data,
        )

    def delete(self, uri: str) -> None:
        try:
            self._json("DELETE", uri)
        except FileNotFoundError:
            return

    def _bulk_deleter(self) -> GcsBatchDeleter:
        return GcsBatchDeleter(self._context.properties, self._context.bulk())

    def list_page(self, prefix: str, token: str | None, limit: int, flat: bool) -> ListedPage:
        """Through the JSON API: obstore's listing fails as a whole on a name with an empty
        segment (InvalidPathError), and such an object would then never be swept."""
        bucket, folder = bucket_and_key(prefix.rstrip("/") + "/")
        endpoint = gcs_access(self._context.properties).endpoint
        query = {
            "prefix": folder,
            "maxResults": str(limit),
            "fields": "items(name,updated),prefixes,nextPageToken",
        }
        if flat:
            query["delimiter"] = "/"
        if token:
            query["pageToken"] = token
        page = self._request(
            "GET", prefix, f"{endpoint}/storage/v1/b/{quote(bucket, safe='')}/o", query=query
        ).json()
        return ListedPage(
            objects=[
                Listed(f"gs://{bucket}/{item['name']}", _timestamp(item["updated"]))
                for item in page.get("items", [])
            ],
            folders=[f"gs://{bucket}/{name.rstrip('/')}" for name in page.get("prefixes", [])],
            next_token=page.get("nextPageToken") or None,
        )

    def head(self, uri: str) -> ObjectHead | None:
        bucket, name = bucket_and_key(uri)
        try:
            if self._through_json(name):
                found = self._json("GET", uri).json()
                return ObjectHead(size=int(found["size"]), modified=_timestamp(found["updated"]))
            with obstore_errors(uri):
                meta = obstore.head(self._bucket(bucket), name)
        except FileNotFoundError:
            return None
        last_modified: datetime = meta["last_modified"]
        return ObjectHead(size=int(meta["size"]), modified=last_modified)

    @staticmethod
    def _through_json(name: str) -> bool:
        return not nameable(name) or forked_since_runtime()

    def _bucket(self, bucket: str) -> ObstoreGcs:
        note_runtime_use()
        context = self._context
        return bucket_store(context.properties, bucket, context.connections, context.attempts)

    def _json(self, method: str, uri: str, query: dict[str, str] | None = None) -> httpx.Response:
        bucket, name = bucket_and_key(uri)
        endpoint = gcs_access(self._context.properties).endpoint
        url = f"{endpoint}/storage/v1/b/{quote(bucket, safe='')}/o/{quote(name, safe='')}"
        return self._request(method, uri, url, query=query)

    def _request(
        self, method: str, uri: str, url: str, query: dict[str, str] | None = None, data: bytes | None = None
    ) -> httpx.Response:
        """One JSON API call, sent again (up to the context's attempts, after a jittered wait)
        while it fails for the moment: no answer, 408, 429 or 5xx."""
        call = _Call(json_client(self._context.properties, self._context.connections), method, url, uri)
        for attempt in range(self._context.attempts - 1):
            try:
                return call.send(query, data, final=False)
            except _TransientError:
                time.sleep(full_jitter(attempt, 0.1, 5.0))
        return call.send(query, data, final=True)


def _timestamp(text: str) -> datetime:
    """The JSON API's RFC 3339 times (2026-11-29T03:28:21.583Z)."""
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


class _TransientError(Exception):
    """A call that failed for the moment, with attempts left."""


@dataclass(frozen=True)
class _Call:
    client: httpx.Client
    method: str
    url: str
    uri: str

    def send(self, query: dict[str, str] | None, data: bytes | None, final: bool) -> httpx.Response:
        try:
            answer = self.client.request(self.method, self.url, params=query, content=data)
        except httpx.TransportError as error:
            if not final:
                raise _TransientError from None
            # The cause is named ("Connection refused", "Name or service not known"): planning
            # tells an endpoint nobody answers at from a reset by it (config_faults).
            raise OSError(f"{type(error).__name__}: {error} ({self.uri})") from None
        status = answer.status_code
        if status < 400:
            return answer
        text = f"HTTP {status}: {answer.reason_phrase} ({self.uri})"
        if status == 404:
            raise FileNotFoundError(text)
        if status in (401, 403):
            raise PermissionError(text)
        if not final and (status in (408, 429) or status >= 500):
            raise _TransientError
        raise OSError(text)
