"""Whole-object reads for planning. On S3 and Azure one GET per file: PyArrow's S3 file system
sends a HEAD before every read (for the size, which a whole read doesn't need), doubling the
requests a plan costs; adlfs does the same. Other stores read through the FileIO.

Errors come out as the FileIO's would: FileNotFoundError for a 404, PermissionError for a 403,
and an OSError naming the store's code for anything else, which read_retrying retries (or, for a
configuration fault, hands to the activity's bounded retry)."""

from __future__ import annotations

import re
from urllib.parse import urlsplit

from pyiceberg.io import FileIO

from icepurge.activities.blob_address import AZURE_SCHEMES
from icepurge.activities.locations import S3_SCHEMES, scheme_of
from icepurge.activities.s3_objects import get_object

# Reads at once per process and store; the shared client's connection pool.
READ_CONNECTIONS = 16

# How PyArrow and fsspec name a refusal in an OSError's text, when they don't raise PermissionError.
_REFUSAL = re.compile(r"ACCESS_DENIED|AccessDenied|InvalidAccessKeyId|SignatureDoesNotMatch|\b403\b")
_ADDRESS = re.compile(r"[a-z][a-z0-9+.-]*://\S+", re.IGNORECASE)


def read_object(io: FileIO, location: str) -> bytes:
    scheme = scheme_of(location)
    if scheme in AZURE_SCHEMES:
        # Here rather than at the top: the Azure SDK takes half a second to import.
        from icepurge.activities.azure_reads import read_blob

        return read_blob(io.properties, location, READ_CONNECTIONS)
    if scheme not in S3_SCHEMES:
        return _read_through_file_io(io, location)
    return get_object(io.properties, location, READ_CONNECTIONS, max_attempts=1)


def _read_through_file_io(io: FileIO, location: str) -> bytes:
    try:
        with io.new_input(location).open(seekable=False) as stream:
            return stream.read()
    except (FileNotFoundError, PermissionError):
        raise
    except OSError as error:
        if names_a_refusal(str(error), location):
            raise PermissionError(str(error)) from error
        raise


def names_a_refusal(text: str, location: str) -> bool:
    """Whether an error's text says the store refused the read. Addresses are left out first: a
    file's UUID (…-4033-…) or an endpoint's port (:40312) holds "403", and a transient fault
    there must not become a final "access denied"."""
    text = text.replace(location, "").replace(urlsplit(location).path.lstrip("/"), "")
    return _REFUSAL.search(_ADDRESS.sub("", text)) is not None
