"""Google Cloud Storage from PyIceberg's gcs.* FileIO properties (the request's, never logged):
where the service is, the bearer token requests carry, and the clients shared per process: an
obstore store per bucket for whole-object reads and heads (the XML API), an httpx client for
what obstore can't do exactly (the JSON API's listings, uploads, deletes and batches).

The token is the one the properties carry (`gcs.oauth2.token`, what a REST catalog vends and
PyIceberg's FileIO sends); `gcs.service.host` points at an emulator or a private endpoint, and
with no token there requests go without one. Nothing is read from the environment: a worker
purges with the credentials of the request, never its own."""

from __future__ import annotations

import functools
import json
import threading
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

import httpx
from obstore.store import GCSStore
from pyiceberg.io import GCS_SERVICE_HOST, GCS_TOKEN, GCS_TOKEN_EXPIRES_AT_MS

from icepurge.stores.obstore_runtime import client_options, retry_config
from icepurge.stores.shared_pools import pooled_connections

if TYPE_CHECKING:
    from obstore.store import GCSCredential

GCS_ENDPOINT = "https://storage.googleapis.com"
# Stores are per bucket: room for every bucket and credential set a worker talks to at once.
_SHARED_CLIENTS = 64
_BUILDING = threading.Lock()


class GcsCredentialsError(OSError):
    """No token for Google's own endpoint: nothing would be allowed."""


@dataclass(frozen=True)
class GcsAccess:
    endpoint: str
    token: str | None
    expires_at: datetime | None

    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"} if self.token else {}


def gcs_access(properties: dict[str, str]) -> GcsAccess:
    endpoint = (properties.get(GCS_SERVICE_HOST) or GCS_ENDPOINT).rstrip("/")
    token = properties.get(GCS_TOKEN) or None
    if token is None and endpoint == GCS_ENDPOINT:
        raise GcsCredentialsError(
            f"No credentials for Google Cloud Storage: set {GCS_TOKEN} (a token the catalog "
            f"vends, or `gcloud auth print-access-token`), or {GCS_SERVICE_HOST} for an emulator"
        )
    expires = properties.get(GCS_TOKEN_EXPIRES_AT_MS)
    expires_at = datetime.fromtimestamp(int(expires) / 1000, UTC) if expires else None
    return GcsAccess(endpoint, token, expires_at)


def json_client(properties: dict[str, str], max_connections: int) -> httpx.Client:
    with _BUILDING:
        return _shared_client(tuple(sorted(properties.items())), max_connections)


@functools.lru_cache(maxsize=_SHARED_CLIENTS)
def _shared_client(items: tuple[tuple[str, str], ...], max_connections: int) -> httpx.Client:
    # Retries are ours, counted and visible: the client sends each request once.
    return httpx.Client(
        headers=gcs_access(dict(items)).headers(),
        limits=httpx.Limits(
            max_connections=pooled_connections(max_connections),
            max_keepalive_connections=pooled_connections(max_connections),
        ),
        timeout=httpx.Timeout(60.0, connect=10.0),
    )


def bucket_store(properties: dict[str, str], bucket: str, connections: int, attempts: int) -> GCSStore:
    with _BUILDING:
        return _shared_store(tuple(sorted(properties.items())), bucket, connections, attempts)


@functools.lru_cache(maxsize=_SHARED_CLIENTS)
def _shared_store(
    items: tuple[tuple[str, str], ...], bucket: str, connections: int, attempts: int
) -> GCSStore:
    access = gcs_access(dict(items))
    # object_store takes another endpoint only from a service account key; the key's signing
    # fields stay empty, as the bearer token comes from `credential_provider`.
    endpoint_key = {"gcs_base_url": access.endpoint, "disable_oauth": True}
    endpoint_key.update(dict.fromkeys(("client_email", "private_key", "private_key_id"), ""))
    credential: GCSCredential = {
        "token": access.token or "",
        "expires_at": access.expires_at or datetime.now(UTC) + timedelta(days=3650),
    }
    return GCSStore(
        bucket,
        config={"service_account_key": json.dumps(endpoint_key)},
        credential_provider=lambda: credential,
        client_options=client_options(access.endpoint, connections),
        retry_config=retry_config(attempts),
    )
