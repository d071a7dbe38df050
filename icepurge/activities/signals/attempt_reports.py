"""Tells a workflow about an activity attempt that failed and will be retried."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from temporalio.exceptions import ApplicationError, CancelledError

from icepurge.activities.signals.progress_signals import ProgressSignals
from icepurge.state.attempt_fence import StaleAttemptError


@contextmanager
def reporting_failed_attempts(signals: ProgressSignals | None, step: str) -> Iterator[None]:
    """A final failure or a cancellation reaches the workflow by itself; a retried attempt
    doesn't, and without this its error would stay invisible until the retries ran out."""
    try:
        yield
    except (CancelledError, StaleAttemptError):
        # A superseded attempt has nothing to report: the newer one is the step now.
        raise
    except ApplicationError as error:
        if not error.non_retryable and signals is not None:
            signals.attempt_failed(step, f"{error.type or 'Error'}: {error.message}")
        raise
    except Exception as error:
        if signals is not None:
            signals.attempt_failed(step, f"{type(error).__name__}: {error}")
        raise
