"""Reads table metadata JSON and turns each way it can fail into a typed, non-retryable fault."""

from __future__ import annotations

import gzip
import json
from collections.abc import Callable
from typing import Any

from pydantic import ValidationError
from pyiceberg.io import FileIO
from pyiceberg.table.metadata import TableMetadata, TableMetadataUtil
from temporalio.exceptions import ApplicationError

from icepurge.activities.plan.object_reads import read_object
from icepurge.activities.plan.read_retry import read_retrying
from icepurge.contract.names import (
    ERROR_METADATA_ACCESS_DENIED,
    ERROR_METADATA_CORRUPT,
    ERROR_METADATA_NOT_FOUND,
    ERROR_UNSUPPORTED_FORMAT,
)

SUPPORTED_FORMAT_VERSIONS = (1, 2, 3)


class TerminalMetadataError(ApplicationError):
    """A metadata problem that retrying cannot fix; the message names the file and the cause."""

    def __init__(self, kind: str, location: str, cause: str) -> None:
        super().__init__(f"{cause}: {location}", type=kind, non_retryable=True)
        self.location = location


def read_bytes(io: FileIO, location: str, beat: Callable[[], None] = lambda: None) -> bytes:
    """Reads a whole file through transient faults; missing and forbidden files raise a
    TerminalMetadataError."""
    try:
        return read_retrying(lambda: read_object(io, location), location, beat)
    except FileNotFoundError:
        raise TerminalMetadataError(ERROR_METADATA_NOT_FOUND, location, "metadata file not found") from None
    except PermissionError:
        raise TerminalMetadataError(
            ERROR_METADATA_ACCESS_DENIED,
            location,
            "access denied reading metadata; check the FileIO credentials",
        ) from None


def parse_metadata(raw: bytes, location: str) -> TableMetadata:
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    try:
        document: Any = json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise TerminalMetadataError(
            ERROR_METADATA_CORRUPT, location, f"metadata is not valid JSON ({error})"
        ) from None
    if not isinstance(document, dict):
        raise TerminalMetadataError(ERROR_METADATA_CORRUPT, location, "metadata is not a JSON object")
    version = document.get("format-version")
    if version not in SUPPORTED_FORMAT_VERSIONS:
        raise TerminalMetadataError(
            ERROR_UNSUPPORTED_FORMAT,
            location,
            f"unsupported Iceberg format-version {version!r} (supported: 1, 2, 3)",
        )
    try:
        return TableMetadataUtil.parse_obj(document)
    except (ValidationError, ValueError) as error:
        first = str(error).splitlines()[0]
        raise TerminalMetadataError(
            ERROR_METADATA_CORRUPT, location, f"metadata does not parse ({first})"
        ) from None
