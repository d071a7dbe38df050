"""Retries reads of table metadata through transient faults, so that a 503, a reset or a timeout
is never taken for a missing or corrupt file.

Only FileNotFoundError (the store said 404) and PermissionError are final here; any other
OSError (what PyArrow raises for SlowDown, 5xx, resets, timeouts, DNS failures) is retried with
jittered backoff, then raised so the activity's own retry policy takes over.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import TypeVar

from icepurge.activities.plan.config_faults import is_configuration_fault
from icepurge.stores.backoff import full_jitter

log = logging.getLogger(__name__)

T = TypeVar("T")
READ_ATTEMPTS = 5


def read_retrying(read: Callable[[], T], location: str, beat: Callable[[], None] = lambda: None) -> T:
    for attempt in range(READ_ATTEMPTS - 1):
        try:
            return read()
        except (FileNotFoundError, PermissionError):
            raise
        except OSError as error:
            # Retried by the activity instead, where the operator sees it and it is bounded.
            if is_configuration_fault(error):
                raise
            log.info("transient fault reading %s, retrying: %s", location, type(error).__name__)
            time.sleep(full_jitter(attempt, 0.2, 4.0))
            beat()
    return read()
