"""The state location: where plans, chunk outcomes and reports live as objects (claim checks),
on whichever store the location is (the store layer). A Spark task builds one on a fresh Python
worker: on S3 it needs no PyIceberg FileIO, whose PyArrow import alone took most of a second."""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from pydantic import BaseModel

from icepurge.state.attempt_fence import AttemptFences
from icepurge.state.held_state import HOLD_LIMIT_BYTES, HeldFolder, HeldFolders
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
        self._held = HeldFolders()
        self._fences = AttemptFences(self._read_plain, self._store.write, self.uri)

    def uri(self, *parts: str) -> str:
        return "/".join([self.location, *parts])

    @contextmanager
    def holding(self, folder: str, objects: dict[str, str] | None = None) -> Iterator[HeldFolder]:
        """Keeps `folder`'s objects (but its report) in memory within the block, starting from
        `objects` (HeldFolder.encoded); nothing held reaches the store unless flushed."""
        held = HeldFolder.decoded(folder, objects or {})
        self._held.add(held)
        try:
            yield held
        finally:
            self._held.remove(held)

    def flush(self, held: HeldFolder) -> None:
        """Writes a held folder's objects to the store; its later writes go straight there."""
        with self._held.lock:
            if held.flushed:
                return
            self._fences.before_change()
            for name, data in held.objects.items():
                self._store.write(f"{held.folder}/{name}", data)
            held.flushed = True
            held.objects.clear()
            self._held.remove(held)

    def write(self, uri: str, document: BaseModel | dict[str, Any], compress: bool = False) -> None:
        """Writes JSON; compressed objects are gzip inside a plain name, because PyArrow would
        compress a `.gz` name once more on write but not undo it on read."""
        text = document.model_dump_json() if isinstance(document, BaseModel) else json.dumps(document)
        data = gzip.compress(text.encode(), compresslevel=5) if compress else text.encode()
        with self._held.lock:
            found = self._held.find(uri)
            if found is not None:
                held, name = found
                held.objects[name] = data
                if held.size() > HOLD_LIMIT_BYTES:
                    self.flush(held)
                return
        self._fences.before_change()
        self._store.write(uri, data)

    def read(self, uri: str) -> bytes | None:
        """The object's bytes, or None when it does not exist."""
        with self._held.lock:
            found = self._held.find(uri)
            raw = found[0].objects.get(found[1]) if found is not None else None
        if found is None:
            self._fences.before_read()
            raw = self._read_plain(uri)
        if raw is None:
            return None
        return gzip.decompress(raw) if raw[:2] == _GZIP_MAGIC else raw

    def delete(self, uri: str) -> None:
        with self._held.lock:
            found = self._held.find(uri)
            if found is not None:
                found[0].objects.pop(found[1], None)
                return
        self._fences.before_change()
        self._store.delete(uri)

    def _read_plain(self, uri: str) -> bytes | None:
        try:
            return self._store.read(uri)
        except FileNotFoundError:
            return None
