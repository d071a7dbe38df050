"""A purge's own object gone from the state location: what resumes a step is lost, so the step
fails at once, saying where to look, rather than retry what can't come back."""

from __future__ import annotations

from temporalio.exceptions import ApplicationError

from icepurge.contract.names import ERROR_STATE_LOCATION


def missing_state_object(what: str, uri: str) -> ApplicationError:
    return ApplicationError(
        f"{what} missing at {uri}; was the state location cleaned?",
        type=ERROR_STATE_LOCATION,
        non_retryable=True,
    )
