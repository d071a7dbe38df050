"""Which kind of store a URI is on, decided here and nowhere else. The store layer
(icepurge.stores) holds one implementation per kind; requests, workflows and activities ask this
table, never a scheme list of their own."""

from __future__ import annotations

from enum import StrEnum
from typing import Final


class StoreKind(StrEnum):
    S3 = "s3"
    AZURE = "azure"
    FILE = "file"
    # Whatever else PyIceberg's FileIO reads (gs://, hdfs://, oss://): one request per file.
    OTHER = "other"


STORE_SCHEMES: Final[dict[str, StoreKind]] = {
    "s3": StoreKind.S3,
    "s3a": StoreKind.S3,
    "s3n": StoreKind.S3,
    "abfs": StoreKind.AZURE,
    "abfss": StoreKind.AZURE,
    "wasb": StoreKind.AZURE,
    "wasbs": StoreKind.AZURE,
    "file": StoreKind.FILE,
}
# The schemes a request may name: the kinds above, and the FileIO's other stores.
SUPPORTED_SCHEMES: Final = frozenset({*STORE_SCHEMES, "gs", "gcs", "hdfs", "viewfs", "oss"})
# Stores whose objects can be listed a page at a time: where the location sweep runs.
LISTABLE_KINDS: Final = frozenset({StoreKind.S3, StoreKind.AZURE, StoreKind.FILE})


def scheme_of(uri: str) -> str:
    """The URI's scheme, lower case; a bare path is on the local disk."""
    head, sep, _ = uri.partition("://")
    return head.lower() if sep else "file"


def store_kind(uri: str) -> StoreKind:
    return STORE_SCHEMES.get(scheme_of(uri), StoreKind.OTHER)


def names_a_scheme(uri: str) -> bool:
    return "://" in uri
