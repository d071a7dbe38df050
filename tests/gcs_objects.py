"""Looks at fake-gcs-server directly (not through icepurge): which objects a location holds."""

from __future__ import annotations

from urllib.parse import quote, urlsplit

import httpx

from icepurge.devstack.fake_gcs import FakeGcsEndpoint


class GcsObjects:
    def __init__(self, endpoint: FakeGcsEndpoint) -> None:
        self.endpoint = endpoint
        self.properties = endpoint.properties()

    def list(self, location: str) -> set[str]:
        """Object URIs under a location (a folder), spelled as the table spells them."""
        parts = urlsplit(location.rstrip("/") + "/")
        names = self.endpoint.names(parts.netloc, parts.path.lstrip("/"))
        return {f"{parts.scheme}://{parts.netloc}/{name}" for name in names}

    def put(self, uri: str, body: bytes = b"x") -> None:
        parts = urlsplit(uri)
        answer = httpx.post(
            f"{self.endpoint.url}/upload/storage/v1/b/{quote(parts.netloc, safe='')}/o",
            params={"uploadType": "media", "name": parts.path.lstrip("/")},
            content=body,
            timeout=30,
        )
        answer.raise_for_status()

    def exists(self, uri: str) -> bool:
        parts = urlsplit(uri)
        bucket, name = quote(parts.netloc, safe=""), quote(parts.path.lstrip("/"), safe="")
        answer = httpx.get(f"{self.endpoint.url}/storage/v1/b/{bucket}/o/{name}", timeout=30)
        return answer.status_code == 200
