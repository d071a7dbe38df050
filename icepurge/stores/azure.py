"""Azure Blob Storage and ADLS Gen2 (abfs[s]://, wasb[s]://) through the Azure SDK: one GET per
read (adlfs sends a HEAD first), Blob Batch bulk deletes. Imported only when a URI is on Azure:
the SDK takes half a second to import, and it is an extra (icepurge[azure])."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from typing import Any

from azure.core.exceptions import AzureError, HttpResponseError, ResourceNotFoundError
from azure.storage.blob import BlobPrefix, ContainerClient

from icepurge.stores.azure_client import blob_service, safe_message
from icepurge.stores.azure_deletes import AzureBatchDeleter
from icepurge.stores.blob_address import BlobAddress, blob_address
from icepurge.stores.bulk_deleting import BulkDeleting
from icepurge.stores.store import Listed, ListedPage, ObjectHead, StoreContext


@contextmanager
def as_os_errors(location: str) -> Iterator[None]:
    try:
        yield
    except ResourceNotFoundError:
        raise FileNotFoundError(f"BlobNotFound ({location})") from None
    except HttpResponseError as error:
        text = f"{getattr(error, 'error_code', None) or error.status_code}: {error.reason} ({location})"
        if error.status_code == 403:
            raise PermissionError(text) from None
        raise OSError(text) from None
    except AzureError as error:
        raise OSError(f"{type(error).__name__}: {safe_message(error)}") from None


class AzureStore(BulkDeleting):
    def __init__(self, context: StoreContext) -> None:
        self._context = context

    def read(self, uri: str) -> bytes:
        address = blob_address(uri)
        with as_os_errors(uri):
            data: bytes = self._container(address).download_blob(address.name).readall()
            return data

    def write(self, uri: str, data: bytes) -> None:
        address = blob_address(uri)
        with as_os_errors(uri):
            self._container(address).upload_blob(address.name, data, overwrite=True)

    def delete(self, uri: str) -> None:
        address = blob_address(uri)
        try:
            with as_os_errors(uri):
                self._container(address).delete_blob(address.name)
        except FileNotFoundError:
            return

    def _bulk_deleter(self) -> AzureBatchDeleter:
        return AzureBatchDeleter(self._context.properties, self._context.bulk())

    def list_page(self, prefix: str, token: str | None, limit: int, flat: bool) -> ListedPage:
        address = blob_address(prefix.rstrip("/") + "/")
        base = prefix.rstrip("/").removesuffix(address.name.rstrip("/")).rstrip("/")
        container = self._container(address)
        with as_os_errors(prefix):
            if flat:
                found: Any = container.walk_blobs(
                    name_starts_with=address.name, delimiter="/", results_per_page=limit
                )
            else:
                found = container.list_blobs(name_starts_with=address.name, results_per_page=limit)
            pages = found.by_page(continuation_token=token)
            items = list(next(pages, []))
        objects = [
            Listed(f"{base}/{item.name}", item.last_modified)
            for item in items
            if not isinstance(item, BlobPrefix)
        ]
        folders = [f"{base}/{item.name.rstrip('/')}" for item in items if isinstance(item, BlobPrefix)]
        return ListedPage(objects=objects, folders=folders, next_token=pages.continuation_token or None)

    def head(self, uri: str) -> ObjectHead | None:
        address = blob_address(uri)
        try:
            with as_os_errors(uri):
                properties = self._container(address).get_blob_client(address.name).get_blob_properties()
        except FileNotFoundError:
            return None
        modified: datetime = properties.last_modified
        return ObjectHead(size=int(properties.size), modified=modified)

    def _container(self, address: BlobAddress) -> ContainerClient:
        # adlfs's short form (abfs://container/path) names no account: the properties do.
        service = blob_service(self._context.properties, address.account or None, self._context.connections)
        return service.get_container_client(address.container)
