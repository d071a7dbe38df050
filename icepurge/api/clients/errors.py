"""Typed errors both client transports raise; each says what to do."""

from __future__ import annotations


class PurgeNotFoundError(LookupError):
    """No purge has this id; check the id printed when the purge was started."""


class PurgeAccessDeniedError(PermissionError):
    """The token is missing, unknown, or not allowed this action on this catalog."""

    def __init__(self, message: str, status_code: int) -> None:
        super().__init__(message)
        self.status_code = status_code


class PurgeServiceUnavailableError(ConnectionError):
    """Temporal (or the API) can't be reached right now; retry after `retry_after` seconds."""

    def __init__(self, message: str, retry_after: float = 5.0) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class PurgeFailedError(RuntimeError):
    """The purge ended FAILED or CANCELLED. `error_type` names a failure (MetadataNotFound,
    InvalidPurgeRequest, ...); the message says what went wrong. Fix the cause and start again."""

    def __init__(self, purge_id: str, state: str, message: str, error_type: str | None) -> None:
        super().__init__(f"purge {purge_id} ended {state}: {message}")
        self.purge_id = purge_id
        self.state = state
        self.error_type = error_type
        self.reason = message


class PurgeControlRejectedError(RuntimeError):
    """The purge can't take this control now (already paused, not paused, finished, ...); the
    message says why. Check its status and try the control that fits."""


class PurgeReportUnavailableError(LookupError):
    """The purge has no report object (yet): it is still running, or ended before writing one;
    the message says which. Its status tells the rest."""
