"""Failures icepurge expects (a typed ApplicationError: TableNotFound, StoreUnreachable while it
is retried, LiveTable, ...) are one line in the worker's log; a traceback stays for the
unexpected (any other exception, or an ApplicationError without a type).

The SDK logs every failed activity with its traceback at WARNING, unless the error's category is
BENIGN (then at DEBUG): an expected failure leaves here as the same error, benign, after its
line. Retries, non-retryable and the workflow's view of the error are unchanged."""

from __future__ import annotations

import logging
from typing import Any

from temporalio import activity
from temporalio.exceptions import ApplicationError, ApplicationErrorCategory
from temporalio.worker import (
    ActivityInboundInterceptor,
    ExecuteActivityInput,
    Interceptor,
)

log = logging.getLogger(__name__)


def benign(error: ApplicationError) -> ApplicationError:
    return ApplicationError(
        error.message,
        *error.details,
        type=error.type,
        non_retryable=error.non_retryable,
        next_retry_delay=error.next_retry_delay,
        category=ApplicationErrorCategory.BENIGN,
    )


class _OneLine(ActivityInboundInterceptor):
    async def execute_activity(self, input: ExecuteActivityInput) -> Any:
        try:
            return await super().execute_activity(input)
        except ApplicationError as error:
            # Untyped: not one icepurge raises on purpose.
            if error.type is None or error.category is ApplicationErrorCategory.BENIGN:
                raise
            info = activity.info()
            outcome = "fails the step" if error.non_retryable else "will be retried"
            log.warning(
                "%s of %s, attempt %d, %s: %s: %s",
                info.activity_type,
                info.workflow_id,
                info.attempt,
                outcome,
                error.type,
                error.message,
            )
            raise benign(error) from None


class ExpectedFailures(Interceptor):
    def intercept_activity(self, next: ActivityInboundInterceptor) -> ActivityInboundInterceptor:
        return _OneLine(next)
