"""Where an Azure Blob Storage URI points (abfs[s]://, wasb[s]://), without the Azure SDK: most
processes never touch Azure, and the SDK takes half a second to import."""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlsplit


@dataclass(frozen=True)
class BlobAddress:
    """`abfs[s]://container@account.dfs.core.windows.net/path` (or wasb[s] with .blob.), or
    adlfs's short `abfs://container/path`, whose account comes from the properties."""

    account: str | None
    container: str
    name: str


def blob_address(uri: str) -> BlobAddress:
    parts = urlsplit(uri)
    container, at, host = parts.netloc.partition("@")
    return BlobAddress(host.split(".", 1)[0] if at else None, container, parts.path.lstrip("/"))
