"""Test-side view of the S3 store: list, put, count; independent of the code under test."""

from __future__ import annotations

from urllib.parse import urlsplit

from icepurge.stores.s3_client import s3_client


def key_of(uri: str) -> str:
    """An object URI's key, as the store (and the fault proxy) sees it."""
    return urlsplit(uri).path.lstrip("/")


class S3Store:
    def __init__(self, properties: dict[str, str]) -> None:
        self.properties = properties
        self.client = s3_client(properties, max_connections=16)

    def list(self, location: str) -> set[str]:
        """Object URIs under a location (a folder), without SeaweedFS's directory markers."""
        return set(self.sizes(location))

    def sizes(self, location: str) -> dict[str, int]:
        """Object URIs under a location and their sizes in bytes."""
        parts = urlsplit(location.rstrip("/") + "/")
        bucket, prefix = parts.netloc, parts.path.lstrip("/")
        found: dict[str, int] = {}
        for page in self.client.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix):
            for item in page.get("Contents", []):
                key = item["Key"]
                if not key.endswith("/"):
                    found[f"s3://{bucket}/{key}"] = item["Size"]
        return found

    def put(self, uri: str, body: bytes = b"x") -> None:
        parts = urlsplit(uri)
        self.client.put_object(Bucket=parts.netloc, Key=parts.path.lstrip("/"), Body=body)

    def read(self, uri: str) -> bytes:
        parts = urlsplit(uri)
        return self.client.get_object(Bucket=parts.netloc, Key=parts.path.lstrip("/"))["Body"].read()

    def exists(self, uri: str) -> bool:
        parts = urlsplit(uri)
        response = self.client.list_objects_v2(Bucket=parts.netloc, Prefix=parts.path.lstrip("/"), MaxKeys=1)
        return any(item["Key"] == parts.path.lstrip("/") for item in response.get("Contents", []))
