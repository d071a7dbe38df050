"""The one place a URI's store is chosen: its scheme's kind (icepurge.contract.schemes) names
the implementation. A new store is one module with a class like S3Store and one line here."""

from __future__ import annotations

from collections.abc import Callable

from icepurge.contract.schemes import StoreKind, store_kind
from icepurge.extras import require_extra
from icepurge.stores.store import Store, StoreContext


def _s3(context: StoreContext, _: str) -> Store:
    from icepurge.stores.s3 import S3Store

    return S3Store(context)


def _azure(context: StoreContext, _: str) -> Store:
    require_extra("Azure Blob Storage and ADLS (abfs://, wasb://)", "azure.storage.blob", "azure")
    # Here rather than at the top: the Azure SDK takes half a second to import.
    from icepurge.stores.azure import AzureStore

    return AzureStore(context)


def _local(context: StoreContext, _: str) -> Store:
    from icepurge.stores.local import LocalStore

    return LocalStore(context)


def _fileio(context: StoreContext, sample: str) -> Store:
    from icepurge.stores.fileio import FileIOStore

    return FileIOStore(context, sample)


STORES: dict[StoreKind, Callable[[StoreContext, str], Store]] = {
    StoreKind.S3: _s3,
    StoreKind.AZURE: _azure,
    StoreKind.FILE: _local,
    StoreKind.OTHER: _fileio,
}


def open_store(uri: str, context: StoreContext) -> Store:
    """The store `uri` is on; `uri` also tells a FileIO store which FileIO to load."""
    return STORES[store_kind(uri)](context, uri)
