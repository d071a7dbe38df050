"""The state location: where plans, chunk outcomes and reports live as objects (claim checks)."""

from __future__ import annotations

import gzip
import json
from typing import Any

from pydantic import BaseModel
from pyiceberg.io import FileIO, load_file_io

_GZIP_MAGIC = b"\x1f\x8b"


class StateStore:
    def __init__(self, location: str, properties: dict[str, str]) -> None:
        self.location = location.rstrip("/")
        self._io: FileIO = load_file_io(properties, self.location)

    def uri(self, *parts: str) -> str:
        return "/".join([self.location, *parts])

    def write(self, uri: str, document: BaseModel | dict[str, Any], compress: bool = False) -> None:
        """Writes JSON; compressed objects are gzip inside a plain name, because PyArrow would
        compress a `.gz` name once more on write but not undo it on read."""
        data = document.model_dump_json() if isinstance(document, BaseModel) else json.dumps(document)
        payload = gzip.compress(data.encode(), compresslevel=5) if compress else data.encode()
        with self._io.new_output(uri).create(overwrite=True) as stream:
            stream.write(payload)

    def read(self, uri: str) -> bytes | None:
        """The object's bytes, or None when it does not exist."""
        try:
            with self._io.new_input(uri).open() as stream:
                raw = stream.read()
        except FileNotFoundError:
            return None
        return gzip.decompress(raw) if raw[:2] == _GZIP_MAGIC else raw

    def delete(self, uri: str) -> None:
        try:
            self._io.delete(uri)
        except FileNotFoundError:
            return
