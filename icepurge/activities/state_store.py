"""The state location: where plans, chunk outcomes and reports live as objects (claim checks)."""

from __future__ import annotations

import gzip
import json
from typing import Any

from pydantic import BaseModel
from pyiceberg.io import FileIO, load_file_io

from icepurge.activities.locations import S3_SCHEMES, scheme_of
from icepurge.activities.s3_objects import delete_object, get_object, put_object

_GZIP_MAGIC = b"\x1f\x8b"
# Requests at once per process on an S3 state location, and attempts per request (boto3's
# standard retries, as many as PyArrow's S3 file system made: throttling, 5xx, connection errors).
_S3_CONNECTIONS = 16
_S3_ATTEMPTS = 3


class StateStore:
    """On S3 through the process's shared boto3 client, one request an operation; elsewhere
    through the FileIO. A Spark task builds one on a fresh Python worker, where PyIceberg's
    PyArrow FileIO alone took most of a second to import."""

    def __init__(self, location: str, properties: dict[str, str]) -> None:
        self.location = location.rstrip("/")
        self._properties = properties
        self._io: FileIO | None = None
        if scheme_of(self.location) not in S3_SCHEMES:
            self._io = load_file_io(properties, self.location)

    def uri(self, *parts: str) -> str:
        return "/".join([self.location, *parts])

    def write(self, uri: str, document: BaseModel | dict[str, Any], compress: bool = False) -> None:
        """Writes JSON; compressed objects are gzip inside a plain name, because PyArrow would
        compress a `.gz` name once more on write but not undo it on read."""
        data = document.model_dump_json() if isinstance(document, BaseModel) else json.dumps(document)
        payload = gzip.compress(data.encode(), compresslevel=5) if compress else data.encode()
        if self._io is None:
            put_object(self._properties, uri, payload, _S3_CONNECTIONS, _S3_ATTEMPTS)
            return
        with self._io.new_output(uri).create(overwrite=True) as stream:
            stream.write(payload)

    def read(self, uri: str) -> bytes | None:
        """The object's bytes, or None when it does not exist."""
        try:
            if self._io is None:
                raw = get_object(self._properties, uri, _S3_CONNECTIONS, _S3_ATTEMPTS)
            else:
                with self._io.new_input(uri).open() as stream:
                    raw = stream.read()
        except FileNotFoundError:
            return None
        return gzip.decompress(raw) if raw[:2] == _GZIP_MAGIC else raw

    def delete(self, uri: str) -> None:
        if self._io is None:
            delete_object(self._properties, uri, _S3_CONNECTIONS, _S3_ATTEMPTS)
            return
        try:
            self._io.delete(uri)
        except FileNotFoundError:
            return
