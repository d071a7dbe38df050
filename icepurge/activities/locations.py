"""URI helpers and the location guard: which files belong to a table's locations."""

from __future__ import annotations

from collections.abc import Iterable
from urllib.parse import urlsplit

from icepurge.activities.blob_address import AZURE_SCHEMES, blob_address

S3_SCHEMES = frozenset({"s3", "s3a", "s3n"})
# Table properties that move where a table writes; all of them are the table's own locations.
LOCATION_PROPERTIES = ("write.data.path", "write.metadata.path", "write.object-storage.path")


def scheme_of(uri: str) -> str:
    head, sep, _ = uri.partition("://")
    return head.lower() if sep else "file"


def normalize(uri: str) -> str:
    """One spelling per object: s3a/s3n are s3, abfss/wasb(s) are abfs, no trailing slash, no
    duplicate slashes."""
    scheme = scheme_of(uri)
    if scheme in S3_SCHEMES:
        parts = urlsplit(uri)
        path = "/".join(segment for segment in parts.path.split("/") if segment)
        return f"s3://{parts.netloc}/{path}".rstrip("/")
    if scheme in AZURE_SCHEMES:
        # abfs/abfss/wasb/wasbs and the dfs/blob hosts name the same blob.
        address = blob_address(uri)
        path = "/".join(segment for segment in address.name.split("/") if segment)
        return f"abfs://{address.container}@{address.account or ''}/{path}".rstrip("/")
    if "://" not in uri:
        return "file://" + uri.rstrip("/")
    return uri.rstrip("/")


def parent_dir(uri: str) -> str:
    return uri.rsplit("/", 1)[0]


class LocationGuard:
    """A file is the table's only if it sits under one of the table's locations."""

    def __init__(self, locations: Iterable[str], enabled: bool = True) -> None:
        self.prefixes = sorted({normalize(location) + "/" for location in locations if location})
        self.enabled = enabled

    def allows(self, uri: str) -> bool:
        if not self.enabled:
            return True
        candidate = normalize(uri)
        return any(candidate.startswith(prefix) for prefix in self.prefixes)


def table_locations(location: str, properties: dict[str, str]) -> list[str]:
    return [location, *(properties[key] for key in LOCATION_PROPERTIES if properties.get(key))]
