"""Looks at Azurite directly (not through icepurge): which blobs a location holds."""

from __future__ import annotations

from urllib.parse import urlsplit

from icepurge.devstack.azurite import AzuriteEndpoint
from icepurge.stores.blob_address import blob_address


class BlobStore:
    def __init__(self, endpoint: AzuriteEndpoint) -> None:
        self.endpoint = endpoint
        self.properties = endpoint.properties()
        self.service = endpoint.service()

    def list(self, location: str) -> set[str]:
        """Blob URIs under a location (a folder), spelled as the table spells them."""
        address = blob_address(location.rstrip("/") + "/")
        parts = urlsplit(location)
        base = f"{parts.scheme}://{parts.netloc}/"
        container = self.service.get_container_client(address.container)
        return {base + blob.name for blob in container.list_blobs(name_starts_with=address.name)}

    def put(self, uri: str, body: bytes = b"x") -> None:
        address = blob_address(uri)
        self.service.get_blob_client(address.container, address.name).upload_blob(body, overwrite=True)

    def exists(self, uri: str) -> bool:
        address = blob_address(uri)
        return bool(self.service.get_blob_client(address.container, address.name).exists())
