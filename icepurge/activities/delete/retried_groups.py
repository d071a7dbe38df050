"""How many files each delete group of an attempt takes, where a group's end is a checkpoint.

A first attempt sends full groups. A retried one starts at one request's worth and doubles up to
a full group: a worker dying more often than a full group takes (8 requests of 1,000 keys took
SeaweedFS more than 2 s on a machine at half speed) would otherwise send the same group again
on every attempt and never move its checkpoint on. Not on every attempt, since each step of the
ramp costs a checkpoint and a wait for the group's slowest request."""

from __future__ import annotations

from collections.abc import Iterator

from icepurge.state.attempt_fence import current_attempt


def retried() -> bool:
    """Whether the running activity (or Spark task) is on an attempt after its first."""
    attempt = current_attempt()
    return attempt is not None and attempt.attempt > 1


def group_sizes(full: int, first: int, ramp: bool) -> Iterator[int]:
    """Each group's files in turn: `full` every time, or, with `ramp`, `first` doubling up to it."""
    size = min(first, full) if ramp else full
    while True:
        yield size
        size = min(size * 2, full)
