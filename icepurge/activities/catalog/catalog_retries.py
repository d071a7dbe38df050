"""Catalog calls inside a longer step (the express lane's, a batch's): retried as a catalog step
of their own would be, not for as long as the step's store faults."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TypeVar

from temporalio import activity
from temporalio.exceptions import ApplicationError

from icepurge.contract.activity_steps import CATALOG_RETRY
from icepurge.contract.names import ERROR_CATALOG_UNAVAILABLE

Value = TypeVar("Value")


@contextmanager
def catalog_retries_bounded() -> Iterator[None]:
    """A catalog that doesn't answer fails the step after as many attempts as a catalog step of
    its own would get, not after the hour a store fault is retried for."""
    try:
        yield
    except ApplicationError as error:
        limit = CATALOG_RETRY.maximum_attempts
        if error.type != ERROR_CATALOG_UNAVAILABLE or error.non_retryable or activity.info().attempt < limit:
            raise
        raise ApplicationError(
            f"{error.message} (gave up after {limit} attempts)", type=error.type, non_retryable=True
        ) from None


def bounded(call: Callable[[], Value]) -> Value:
    with catalog_retries_bounded():
        return call()
