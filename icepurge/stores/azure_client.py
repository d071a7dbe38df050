"""Azure Blob Storage (and ADLS Gen2, through its blob endpoint) from PyIceberg's adls.* FileIO
properties (the request's, never logged): where an abfs:// or wasb:// URI points, and a shared
client for its account. The SDK's own retries are off: ours are counted and visible."""

from __future__ import annotations

import functools
import logging
import re
import threading
from typing import Any

import requests
from azure.core.pipeline.transport import RequestsTransport
from azure.identity import ClientSecretCredential
from azure.storage.blob import BlobServiceClient
from requests.adapters import HTTPAdapter

from icepurge.stores.shared_pools import pooled_connections

_SHARED_CLIENTS = 32
# The SDK logs every request and response, headers included, at INFO: thousands of lines a
# purge in the worker's log, and CPU spent formatting them.
logging.getLogger("azure.core.pipeline.policies.http_logging_policy").setLevel(logging.WARNING)
# A SAS token's signature, as it appears in a request URL an SDK error may quote.
_SAS_SIGNATURE = re.compile(r"(sig=)[^&\s'\"]+", re.IGNORECASE)
_BUILDING = threading.Lock()


def blob_service(properties: dict[str, str], account: str | None, max_connections: int) -> BlobServiceClient:
    with _BUILDING:
        return _shared_service(tuple(sorted(properties.items())), account, max_connections)


@functools.lru_cache(maxsize=_SHARED_CLIENTS)
def _shared_service(
    items: tuple[tuple[str, str], ...], account: str | None, max_connections: int
) -> BlobServiceClient:
    properties = dict(items)
    session = requests.Session()
    adapter = HTTPAdapter(pool_connections=max_connections, pool_maxsize=pooled_connections(max_connections))
    session.mount("http://", adapter)
    session.mount("https://", adapter)
    options: dict[str, Any] = {
        "retry_total": 0,
        "connection_timeout": 10,
        "read_timeout": 60,
        "transport": RequestsTransport(session=session, session_owner=False),
    }
    connection_string = properties.get("adls.connection-string")
    if connection_string:
        return BlobServiceClient.from_connection_string(connection_string, **options)
    name = properties.get("adls.account-name") or account
    if not name:
        raise OSError(
            "No credentials for Azure: set adls.connection-string, or adls.account-name with "
            "adls.account-key, adls.sas-token or adls.tenant-id/client-id/client-secret"
        )
    return BlobServiceClient(
        _account_url(properties, name), credential=_credential(properties, name), **options
    )


def _account_url(properties: dict[str, str], account: str) -> str:
    scheme = properties.get("adls.blob-storage-scheme", "https")
    authority = properties.get("adls.blob-storage-authority") or properties.get("adls.account-host")
    if not authority:
        return f"{scheme}://{account}.blob.core.windows.net"
    # An emulator or proxy at an address: the account goes in the path.
    return (
        f"{scheme}://{authority}"
        if authority.startswith(f"{account}.")
        else f"{scheme}://{authority}/{account}"
    )


def _credential(properties: dict[str, str], account: str) -> Any:
    if properties.get("adls.account-key"):
        return {"account_name": account, "account_key": properties["adls.account-key"]}
    if properties.get("adls.sas-token"):
        return properties["adls.sas-token"]
    secret = [properties.get(f"adls.{key}") for key in ("tenant-id", "client-id", "client-secret")]
    if all(secret):
        tenant, client, value = (str(part) for part in secret)
        return ClientSecretCredential(tenant, client, value)
    raise OSError(
        f"No credentials for Azure account {account}: set adls.account-key, adls.sas-token or "
        "adls.tenant-id/client-id/client-secret (or adls.connection-string)"
    )


def safe_message(error: Exception) -> str:
    """An SDK error's first line, any SAS signature in it blanked: fit for a status or a report."""
    text = str(getattr(error, "message", None) or error)
    return _SAS_SIGNATURE.sub(r"\1***", text.splitlines()[0] if text else type(error).__name__)
