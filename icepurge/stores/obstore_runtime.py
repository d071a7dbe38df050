"""What every store reached through obstore (Rust's object_store) shares: its retries, the
paths it can name, its errors read as the FileIO's would be (FileNotFoundError for a 404,
PermissionError for a 401 or 403, an OSError naming the store's code for anything else, "Could
not connect …" when no connection was made), and the processes it may run in. obstore is not
fork-safe (developmentseed/obstore#441: a forked child's runtime hangs), so a process forked
after its first obstore request sends its requests another way."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from typing import TYPE_CHECKING

from obstore.exceptions import BaseError, PermissionDeniedError, UnauthenticatedError

from icepurge.stores.shared_pools import pooled_connections

if TYPE_CHECKING:
    from obstore.store import ClientConfig, RetryConfig

_BACKOFF_START = timedelta(milliseconds=100)
_BACKOFF_CAP = timedelta(seconds=20)
_STATUS = re.compile(r"status code: (\d{3})")
_CODE = re.compile(r"<Code>([^<]*)</Code>")
_MESSAGE = re.compile(r"<Message>([^<]*)</Message>")
# The innermost cause in the error's debug text: `message: "Connection refused"` or
# `error: "failed to lookup address information: …"`.
_CAUSE = re.compile(r'(?:message|error): "([^"]*)"')
# A TLS failure names its cause without quotes: `InvalidCertificate(\n UnknownIssuer,\n)`.
_CERTIFICATE = re.compile(r"InvalidCertificate\(\s*(\w+)")
_CONNECT = "kind: Connect"
# What makes a connection error a fault of the address or trust, not of the moment: refused,
# unresolved, unroutable, an untrusted certificate. A reset or a timeout stays transient (the
# chaos tier's resets, read as "Could not connect", failed a purge's planning for good).
_UNREACHABLE = (
    "ConnectionRefused",
    "dns error",
    "HostUnreachable",
    "NetworkUnreachable",
    "InvalidCertificate",
)
_UNNAMEABLE_SEGMENTS = frozenset({"", ".", ".."})
# The pids that made an obstore request: one, unless this process was forked after one.
_RUNTIME_PIDS: set[int] = set()


def note_runtime_use() -> None:
    _RUNTIME_PIDS.add(os.getpid())


def forked_since_runtime() -> bool:
    """Whether another process (this one's parent) made obstore requests before it forked."""
    return not {os.getpid()} >= _RUNTIME_PIDS


def retry_config(attempts: int) -> RetryConfig:
    """`attempts` counts the first attempt too."""
    return {
        "max_retries": attempts - 1,
        "retry_timeout": timedelta(minutes=2),
        "backoff": {"init_backoff": _BACKOFF_START, "max_backoff": _BACKOFF_CAP, "base": 2},
    }


def client_options(endpoint: str | None, connections: int) -> ClientConfig:
    """`connections` is what the caller sends at once (the idle pool holds at least that:
    shared_pools); plain HTTP only to an endpoint that says so."""
    return {
        "allow_http": bool(endpoint and endpoint.startswith("http://")),
        "connect_timeout": timedelta(seconds=10),
        "read_timeout": timedelta(seconds=60),
        "timeout": timedelta(minutes=5),
        "pool_max_idle_per_host": str(pooled_connections(connections)),
    }


def nameable(key: str) -> bool:
    """Whether obstore's path for `key` names the same key."""
    return _UNNAMEABLE_SEGMENTS.isdisjoint(key.split("/"))


@contextmanager
def obstore_errors(location: str) -> Iterator[None]:
    try:
        yield
    except FileNotFoundError as error:
        raise FileNotFoundError(_summary(str(error), location)) from None
    except (PermissionDeniedError, UnauthenticatedError) as error:
        raise PermissionError(_summary(str(error), location)) from None
    except BaseError as error:
        raise OSError(_summary(str(error), location)) from None


def _summary(text: str, location: str) -> str:
    """The store's code and message, as boto3's errors name them, rather than obstore's debug
    dump of its retry state."""
    status = _STATUS.search(text)
    if status is not None:
        code = _CODE.search(text)
        message = _MESSAGE.search(text)
        named = code.group(1) if code else status.group(1)
        return f"{named}: {message.group(1) if message else ''} ({location})"
    causes = _CAUSE.findall(text)
    certificate = _CERTIFICATE.search(text)
    cause = (
        f": invalid TLS certificate ({certificate.group(1)})"
        if certificate
        else f": {causes[-1]}"
        if causes
        else ""
    )
    if _CONNECT in text and any(marker in text for marker in _UNREACHABLE):
        return f"Could not connect to the endpoint URL for {location}{cause}"
    first_line = text.partition("\n")[0]
    return f"{first_line}{cause} ({location})"
