"""Callers that read one object at once share reads (icepurge.state.fresh_reads), and yet each
answer comes from a read sent after its caller asked: a fence claimed by a newer attempt just
before a caller checks is always seen by that caller."""

from __future__ import annotations

import sys
import threading
import time

import pytest

from icepurge.state.fresh_reads import FreshReads

_URI = "s3://state/fences/purge-1/run-1/7.json"
_CALLERS = 8


def _waiting(thread: threading.Thread) -> bool:
    """Whether `thread` is blocked in an Event's wait (its round's, or the one ahead's)."""
    frame = sys._current_frames().get(thread.ident or 0)
    while frame is not None:
        if frame.f_code.co_name == "wait" and "threading" in frame.f_code.co_filename:
            return True
        frame = frame.f_back
    return False


def test_callers_arriving_during_a_read_share_the_next_one_sent_after_they_asked() -> None:
    sent: list[int] = []
    first_sent, release_first = threading.Event(), threading.Event()

    def read(uri: str) -> bytes:
        sent.append(len(sent) + 1)
        if len(sent) == 1:
            first_sent.set()
            release_first.wait(timeout=60)
        return str(len(sent)).encode()

    reads = FreshReads(read)
    answers: dict[str, bytes | None] = {}

    def caller(name: str) -> None:
        answers[name] = reads.read(_URI)

    first = threading.Thread(target=caller, args=("first",))
    first.start()
    assert first_sent.wait(timeout=60)
    later = [threading.Thread(target=caller, args=(f"later-{n}",)) for n in range(_CALLERS - 1)]
    for thread in later:
        thread.start()
    deadline = time.monotonic() + 60
    while not all(_waiting(thread) for thread in later):
        assert time.monotonic() < deadline, "the later callers never waited"
        time.sleep(0.01)
    release_first.set()
    for thread in (first, *later):
        thread.join(timeout=60)

    # The first read was sent before the later callers asked: they are answered by the second.
    assert sent == [1, 2]
    assert answers == {"first": b"1", **{f"later-{n}": b"2" for n in range(_CALLERS - 1)}}


def test_a_failed_read_fails_every_caller_it_answers_and_the_next_caller_reads_again() -> None:
    calls: list[str] = []

    def read(uri: str) -> bytes | None:
        calls.append(uri)
        if len(calls) == 1:
            raise OSError("503: SlowDown")
        return None

    reads = FreshReads(read)
    with pytest.raises(OSError, match="SlowDown"):
        reads.read(_URI)
    assert reads.read(_URI) is None
    assert len(calls) == 2


def test_reads_of_other_objects_do_not_wait_for_each_other() -> None:
    release = threading.Event()
    other = "s3://state/fences/purge-2/run-1/7.json"

    def read(uri: str) -> bytes:
        if uri == _URI:
            release.wait(timeout=60)
        return uri.encode()

    reads = FreshReads(read)
    held = threading.Thread(target=reads.read, args=(_URI,))
    held.start()
    try:
        assert reads.read(other) == other.encode()
    finally:
        release.set()
        held.join(timeout=60)
