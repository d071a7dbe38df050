"""The state location: where plans, chunk outcomes and reports live as objects (claim checks),
on whichever store the location is (the store layer). A Spark task builds one on a fresh Python
worker: on S3 it needs no PyIceberg FileIO, whose PyArrow import alone took most of a second."""

from __future__ import annotations

import gzip
import json
from typing import Any

from pydantic import BaseModel

from icepurge.stores.registry import open_store
from icepurge.stores.store import StoreContext

_GZIP_MAGIC = b"\x1f\x8b"
# Requests at once per process on the state location, and attempts per request (on S3, boto3's
# standard retries, as many as PyArrow's S3 file system made: throttling, 5xx, connection errors).
_CONNECTIONS = 16
_ATTEMPTS = 3


class StateStore:
    def __init__(self, location: str, properties: dict[str, str]) -> None:
        self.location = location.rstrip("/")
        self._store = open_store(self.location, StoreContext(properties, _CONNECTIONS, _ATTEMPTS))

    def uri(self, *parts: str) -> str:
        return "/".join([self.location, *parts])

    def write(self, uri: str, document: BaseModel | dict[str, Any], compress: bool = False) -> None:
        """Writes JSON; compressed objects are gzip inside a plain name, because PyArrow would
        compress a `.gz` name once more on write but not undo it on read."""
        data = document.model_dump_json() if isinstance(document, BaseModel) else json.dumps(document)
        self._store.write(uri, gzip.compress(data.encode(), compresslevel=5) if compress else data.encode())

    def read(self, uri: str) -> bytes | None:
        """The object's bytes, or None when it does not exist."""
        try:
            raw = self._store.read(uri)
        except FileNotFoundError:
            return None
        return gzip.decompress(raw) if raw[:2] == _GZIP_MAGIC else raw

    def delete(self, uri: str) -> None:
        self._store.delete(uri)
