"""A process's shared S3 clients keep a connection for every step that shares them: the deletes of
many tables at once, each step sending at most `connections` requests, reuse their connections
rather than closing them after one request with urllib3's "Connection pool is full" WARNING."""

from __future__ import annotations

import logging
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from icepurge.stores.s3_client import s3_client
from icepurge.stores.s3_signed_deletes import signed_deletes

# Steps deleting at once, each built for a step's 8 requests at once (+2, as S3Store asks).
_STEPS = 24
_STEP_CONNECTIONS = 10
# Long enough that every step's request is in flight before the first answer comes back.
_ANSWER_SECONDS = 0.5


class _SlowDeletes(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        time.sleep(_ANSWER_SECONDS)
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, format: str, *args: object) -> None:
        """Quiet: the test reads the client's log, not the server's."""


class _Server(ThreadingHTTPServer):
    # Every step connects at once: socketserver's backlog of 5 would refuse some.
    request_queue_size = _STEPS
    daemon_threads = True


@pytest.fixture
def slow_store() -> Iterator[dict[str, str]]:
    server = _Server(("127.0.0.1", 0), _SlowDeletes)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield {
            "s3.endpoint": f"http://127.0.0.1:{server.server_address[1]}",
            # Fresh credentials: a client of its own, not one another test built.
            "s3.access-key-id": uuid.uuid4().hex,
            "s3.secret-access-key": uuid.uuid4().hex,
        }
    finally:
        server.shutdown()
        server.server_close()


def _signed(properties: dict[str, str]) -> Callable[[], object]:
    return lambda: signed_deletes(properties, _STEP_CONNECTIONS).delete_objects("bucket", ["key"])


def _boto3(properties: dict[str, str]) -> Callable[[], object]:
    client = s3_client(properties, max_connections=_STEP_CONNECTIONS, max_attempts=1)
    return lambda: client.delete_objects(Bucket="bucket", Delete={"Objects": [{"Key": "key"}], "Quiet": True})


@pytest.mark.parametrize("sender", [_signed, _boto3], ids=["signed-deletes", "boto3"])
def test_steps_deleting_at_once_keep_their_connections(
    slow_store: dict[str, str],
    sender: Callable[[dict[str, str]], Callable[[], object]],
    caplog: pytest.LogCaptureFixture,
) -> None:
    delete = sender(slow_store)
    start = threading.Barrier(_STEPS)
    failures: list[BaseException] = []

    def step() -> None:
        start.wait()
        try:
            delete()
        except BaseException as error:
            failures.append(error)

    caplog.set_level(logging.WARNING, logger="urllib3.connectionpool")
    steps = [threading.Thread(target=step) for _ in range(_STEPS)]
    for thread in steps:
        thread.start()
    for thread in steps:
        thread.join()

    assert failures == []
    discarded = [record.getMessage() for record in caplog.records if "pool is full" in record.getMessage()]
    assert discarded == [], f"{len(discarded)} of {_STEPS} connections closed after one request"
