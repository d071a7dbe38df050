"""One spelling per object, whatever the URI said: how locations are compared (the location
guard, the live-table guard, the sweep's planned set)."""

from __future__ import annotations

from urllib.parse import urlsplit

from icepurge.contract.schemes import StoreKind, names_a_scheme, store_kind
from icepurge.stores.blob_address import blob_address

_BUCKET_SCHEMES = {StoreKind.S3: "s3", StoreKind.GCS: "gs"}


def bucket_and_key(uri: str) -> tuple[str, str]:
    """An s3:// or gs:// URI's bucket and object key."""
    parts = urlsplit(uri)
    return parts.netloc, parts.path.lstrip("/")


def normalize(uri: str) -> str:
    """s3a/s3n are s3, gcs is gs, abfss/wasb(s) are abfs, no trailing slash, no duplicate slashes."""
    kind = store_kind(uri)
    if kind in _BUCKET_SCHEMES:
        parts = urlsplit(uri)
        path = "/".join(segment for segment in parts.path.split("/") if segment)
        return f"{_BUCKET_SCHEMES[kind]}://{parts.netloc}/{path}".rstrip("/")
    if kind is StoreKind.AZURE:
        # abfs/abfss/wasb/wasbs and the dfs/blob hosts name the same blob.
        address = blob_address(uri)
        path = "/".join(segment for segment in address.name.split("/") if segment)
        return f"abfs://{address.container}@{address.account or ''}/{path}".rstrip("/")
    if not names_a_scheme(uri):
        return "file://" + uri.rstrip("/")
    return uri.rstrip("/")
