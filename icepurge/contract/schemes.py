"""Which kind of store a URI is on, and everything else icepurge knows of each kind, decided here
and nowhere else: one entry a kind (its schemes, its implementation in icepurge.stores, whether
the location sweep can list it, where engine `auto` switches to Spark on it, the extra it needs).
Requests, workflows, activities and the store layer read this table, never a list of their own; a
new kind is one entry here and one module in icepurge.stores."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Final


class StoreKind(StrEnum):
    S3 = "s3"
    AZURE = "azure"
    GCS = "gcs"
    FILE = "file"
    # Whatever else PyIceberg's FileIO reads (hdfs://, oss://): one request per file.
    OTHER = "other"


@dataclass(frozen=True)
class Extra:
    """An optional dependency a store needs: what it is for, a module it brings, the extra."""

    feature: str
    module: str
    name: str


@dataclass(frozen=True)
class StoreEntry:
    # The URI schemes on this kind of store. OTHER's: the FileIO's schemes a request may name.
    schemes: frozenset[str]
    # `module:Class` in icepurge.stores, built from a StoreContext (and, with `opened_with_uri`,
    # a URI on the store: the FileIO it loads depends on the scheme).
    implementation: str
    # Objects listable a page at a time: the location sweep runs there.
    listable: bool
    # Engine `auto` uses Spark from this many planned content files (bench.compare_engines
    # measures it; the figures are in BENCHMARKS.md); None: local at every size.
    auto_spark_min_files: int | None
    opened_with_uri: bool = False
    extra: Extra | None = None


STORE_REGISTRY: Final[dict[StoreKind, StoreEntry]] = {
    StoreKind.S3: StoreEntry(
        frozenset({"s3", "s3a", "s3n"}),
        "icepurge.stores.s3:S3Store",
        listable=True,
        # On SeaweedFS the local engine was the faster at every size and shape measured (2 cores).
        auto_spark_min_files=None,
    ),
    StoreKind.AZURE: StoreEntry(
        frozenset({"abfs", "abfss", "wasb", "wasbs"}),
        "icepurge.stores.azure:AzureStore",
        listable=True,
        # Measured only on Azurite, an emulator whose single process sets the pace: the threshold
        # icepurge had before it measured per store.
        auto_spark_min_files=100_000,
        # The Azure SDK takes half a second to import: asked for when a purge needs it.
        extra=Extra("Azure Blob Storage and ADLS (abfs://, wasb://)", "azure.storage.blob", "azure"),
    ),
    StoreKind.GCS: StoreEntry(
        frozenset({"gs", "gcs"}),
        "icepurge.stores.gcs:GcsStore",
        listable=True,
        # Measured only on fake-gcs-server (the local engine's batches against the FileIO's one
        # request a file, BENCHMARKS.md); the Spark engine's executors reach GCS through the same
        # store, never measured against a real bucket.
        auto_spark_min_files=None,
    ),
    StoreKind.FILE: StoreEntry(
        frozenset({"file"}),
        "icepurge.stores.local:LocalStore",
        listable=True,
        # The local engine's bulk unlinks reach plain Python's ceiling on a local disk.
        auto_spark_min_files=None,
    ),
    StoreKind.OTHER: StoreEntry(
        frozenset({"hdfs", "viewfs", "oss"}),
        "icepurge.stores.fileio:FileIOStore",
        listable=False,
        # Not measured: the threshold icepurge had before it measured per store.
        auto_spark_min_files=100_000,
        opened_with_uri=True,
    ),
}
STORE_SCHEMES: Final[dict[str, StoreKind]] = {
    scheme: kind
    for kind, entry in STORE_REGISTRY.items()
    if kind is not StoreKind.OTHER
    for scheme in entry.schemes
}
# The schemes a request may name: every kind's.
SUPPORTED_SCHEMES: Final = frozenset(scheme for entry in STORE_REGISTRY.values() for scheme in entry.schemes)
LISTABLE_KINDS: Final = frozenset(kind for kind, entry in STORE_REGISTRY.items() if entry.listable)


def scheme_of(uri: str) -> str:
    """The URI's scheme, lower case; a bare path is on the local disk."""
    head, sep, _ = uri.partition("://")
    return head.lower() if sep else "file"


def store_kind(uri: str) -> StoreKind:
    return STORE_SCHEMES.get(scheme_of(uri), StoreKind.OTHER)


def names_a_scheme(uri: str) -> bool:
    return "://" in uri
