"""The retry loop every bulk-delete API shares (S3 DeleteObjects, Azure Blob Batch): send the
keys left, wait for the bucket's rate budget before each attempt, record each key's answer, send
the transient failures again with jittered backoff, a bounded number of times."""

from __future__ import annotations

import time
from collections.abc import Callable
from concurrent.futures import Executor
from dataclasses import dataclass
from typing import Generic, TypeVar

from icepurge.stores.backoff import full_jitter
from icepurge.stores.outcomes import DeleteOutcome, LatencyObserver, observed
from icepurge.stores.rate_budget import BucketRateLimits

Answer = TypeVar("Answer")


@dataclass(frozen=True)
class RequestFailure:
    """A bulk request that failed as a whole."""

    text: str
    retryable: bool
    throttled: bool

    @classmethod
    def of_status(cls, text: str, status: int) -> RequestFailure:
        """A request the store answered with an HTTP status: sent again when busy or 5xx."""
        return cls(text, retryable_status(status), status in THROTTLED_STATUSES)


@dataclass(frozen=True)
class Settled:
    """The keys to send again, and whether the store throttled any of them."""

    retry: list[str]
    throttled: bool


# HTTP statuses a store answers when it is busy (sent again, counted as throttled).
THROTTLED_STATUSES = frozenset({429, 503})
_NOT_FOUND = 404


def retryable_status(status: int) -> bool:
    return status in THROTTLED_STATUSES or status >= 500


@dataclass(frozen=True)
class CallAnswer:
    """One key's answer in a batch whose calls are answered each on their own (Azure's, GCS's)."""

    status: int
    failure: str


Settle = Callable[[Answer, list[str], dict[str, str], DeleteOutcome, bool], Settled]


def settle_each(deleted: frozenset[int], calls: Callable[[Answer], list[CallAnswer]]) -> Settle[Answer]:
    """How a batch whose calls are answered each on their own settles: `deleted` statuses
    deleted, 404 already gone, 429/5xx sent again, anything else failed."""

    def settle(
        answer: Answer, keys: list[str], uri_of: dict[str, str], outcome: DeleteOutcome, last_attempt: bool
    ) -> Settled:
        retry: list[str] = []
        for key, call in zip(keys, calls(answer), strict=True):
            if call.status in deleted:
                outcome.deleted.append(uri_of[key])
            elif call.status == _NOT_FOUND:
                outcome.missing.append(uri_of[key])
            elif retryable_status(call.status) and not last_attempt:
                retry.append(key)
            else:
                outcome.failed.append((uri_of[key], call.failure))
        return Settled(retry, bool(retry))

    return settle


@dataclass(frozen=True)
class BulkRequest(Generic[Answer]):
    """One store's bulk API: how to send keys, read a whole-request failure and settle an answer
    (recording each key into the outcome)."""

    send: Callable[[list[str]], Answer]
    errors: tuple[type[Exception], ...]
    failure: Callable[[Exception], RequestFailure]
    settle: Settle[Answer]


@dataclass(frozen=True)
class Rounds:
    attempts: int
    limits: BucketRateLimits
    bucket: str
    observer: LatencyObserver = None


def delete_in_rounds(
    request: BulkRequest[Answer],
    keys: list[str],
    uri_of: dict[str, str],
    rounds: Rounds,
    outcome: DeleteOutcome,
) -> DeleteOutcome:
    remaining = keys
    for attempt in range(rounds.attempts):
        last_attempt = attempt + 1 == rounds.attempts
        rounds.limits.acquire(rounds.bucket)
        outcome.requests += 1
        started = time.monotonic()
        try:
            answer = request.send(remaining)
        except request.errors as error:
            observed(rounds.observer, started)
            failure = request.failure(error)
            if not failure.retryable or last_attempt:
                outcome.failed.extend((uri_of[key], failure.text) for key in remaining)
                return outcome
            outcome.throttled += failure.throttled
            time.sleep(full_jitter(attempt, 0.2, 8.0))
            continue
        observed(rounds.observer, started)
        settled = request.settle(answer, remaining, uri_of, outcome, last_attempt)
        if not settled.retry:
            break
        outcome.throttled += settled.throttled
        remaining = settled.retry
        time.sleep(full_jitter(attempt, 0.2, 8.0))
    return outcome


Group = TypeVar("Group")


def in_batches(
    pool: Executor,
    groups: dict[Group, list[tuple[str, str]]],
    size: int,
    delete_batch: Callable[[Group, list[tuple[str, str]]], DeleteOutcome],
) -> DeleteOutcome:
    """Each group's (key, uri) pairs cut into batches of `size`, deleted on the pool, merged."""
    batches = [
        (group, pairs[start : start + size])
        for group, pairs in groups.items()
        for start in range(0, len(pairs), size)
    ]
    outcome = DeleteOutcome()
    for result in pool.map(lambda batch: delete_batch(*batch), batches):
        outcome.merge(result)
    return outcome


def delete_through(
    uri_of: dict[str, str], connect: Callable[[], BulkRequest[Answer]], rounds: Rounds
) -> DeleteOutcome:
    """One batch through a client `connect` builds first: a client that can't be built fails each
    of the batch's files with its error."""
    try:
        request = connect()
    except OSError as error:
        return DeleteOutcome(failed=[(uri, str(error)) for uri in uri_of.values()])
    return delete_in_rounds(request, list(uri_of), uri_of, rounds, DeleteOutcome())
