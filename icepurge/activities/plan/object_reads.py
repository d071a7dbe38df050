"""Whole-object reads for planning, through the store layer: on S3 and Azure one GET per file
(PyArrow's and adlfs's file systems send a HEAD before every read, doubling the requests a plan
costs), an existence check one HEAD; other stores through the FileIO planning already holds.

Errors come out as the FileIO's would (see icepurge.stores.store); read_retrying retries them
(or, for a configuration fault, hands them to the activity's bounded retry)."""

from __future__ import annotations

from pyiceberg.io import FileIO

from icepurge.stores.registry import open_store
from icepurge.stores.store import READ_CONNECTIONS, Store, StoreContext


def _store_for(io: FileIO, location: str) -> Store:
    # One attempt per call: read_retrying counts and reports the attempts.
    context = StoreContext(io.properties, connections=READ_CONNECTIONS, attempts=1, file_io=io)
    return open_store(location, context)


def read_object(io: FileIO, location: str) -> bytes:
    return _store_for(io, location).read(location)


def object_exists(io: FileIO, location: str) -> bool:
    """One HEAD on S3 (PyArrow's file system follows a missing key's HEAD with a listing)."""
    return _store_for(io, location).head(location) is not None
