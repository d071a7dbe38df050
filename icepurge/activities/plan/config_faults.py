"""Faults no retry fixes by itself: an endpoint nobody answers at, a host that doesn't resolve,
missing credentials, a wrong region. They are retried (a restarting store looks the same for a
while), visibly, and end the run FAILED, naming the error, once they have lasted long enough."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime

from temporalio import activity
from temporalio.exceptions import ApplicationError

from icepurge.contract.names import ERROR_STORE_UNREACHABLE

_MARKERS = (
    "resolve host",
    "Couldn't connect",
    "Could not connect",
    "Connection refused",
    "No route to host",
    "Name or service not known",
    "curlCode: 6",
    "curlCode: 7",
    "Unable to locate credentials",
    "No credentials",
    "InvalidRegion",
    "AuthorizationHeaderMalformed",
    "PermanentRedirect",
)
_MESSAGE_LIMIT = 300


def is_configuration_fault(error: OSError) -> bool:
    text = str(error)
    return any(marker in text for marker in _MARKERS)


@contextmanager
def configuration_faults_bounded(budget_seconds: float) -> Iterator[None]:
    """Turns a configuration fault into a typed error: retryable while the activity has been at
    it for less than `budget_seconds` since its first attempt, final after."""
    try:
        yield
    except (FileNotFoundError, PermissionError):
        raise
    except OSError as error:
        if not is_configuration_fault(error):
            raise
        waited = (datetime.now(UTC) - activity.info().scheduled_time).total_seconds()
        detail = " ".join(str(error).split())[:_MESSAGE_LIMIT]
        check = "check s3.endpoint, the region and the credentials in file_io_properties"
        raise ApplicationError(
            f"cannot reach the object store ({detail}); {check} (gave up after {waited:.0f}s)"
            if waited >= budget_seconds
            else f"cannot reach the object store ({detail}); {check} (retried for {waited:.0f}s of "
            f"{budget_seconds:.0f}s before the purge fails)",
            type=ERROR_STORE_UNREACHABLE,
            non_retryable=waited >= budget_seconds,
        ) from None
