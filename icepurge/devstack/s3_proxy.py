"""A fault-injecting pass-through proxy in front of the real S3 store, on loopback (tests,
benchmarks and the chaos run); any HTTP service of the stack can sit behind it (SeaweedFS's REST
catalog, the API's front door).

It counts DeleteObjects requests and keys, can slow them down, can answer 503 SlowDown for
requests that name chosen keys, can deny chosen keys of a DeleteObjects or a GCS batch, and can
hold back the answer to a chosen call after the service acted on it: faults injected on
purpose, everything else is the real service.
"""

from __future__ import annotations

import asyncio
import http
import http.client
import random
import re
import socket
import struct
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote
from xml.sax.saxutils import escape

from icepurge.stores.s3_client import s3_client

if TYPE_CHECKING:
    from mypy_boto3_s3 import S3Client

# Below the stores' 60 s read timeout, so a held delete is answered, never retried.
_GATE_SECONDS = 45.0
_HOP_BY_HOP = {"connection", "keep-alive", "transfer-encoding", "te", "trailer", "upgrade"}
_KEY = re.compile(rb"<Key>([^<]*)</Key>")
# A call of a GCS JSON API batch: its Content-ID and its DELETE's path.
_BATCH_CALL = re.compile(rb"Content-ID: <(\d+)>\r\n\r\nDELETE (\S+) HTTP/1\.1")


@dataclass
class RandomFaults:
    """Faults on a share of all requests, drawn from a seeded generator: 503 SlowDown, a reset
    before the request reaches the store, a reset after it did (the store acted, the client
    never hears)."""

    slow_down: float = 0.0
    reset_before: float = 0.0
    reset_after: float = 0.0
    seed: int = 1
    injected: Counter[str] = field(default_factory=Counter)

    def __post_init__(self) -> None:
        self._draw = random.Random(self.seed)

    def pick(self) -> str | None:
        roll = self._draw.random()
        for kind, share in (
            ("slow_down", self.slow_down),
            ("reset_before", self.reset_before),
            ("reset_after", self.reset_after),
        ):
            if roll < share:
                self.injected[kind] += 1
                return kind
            roll -= share
        return None


class FaultPlan:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.delete_requests = 0
        # When each bulk delete arrived (monotonic), throttled ones included.
        self.delete_times: list[float] = []
        self.deleted_keys: list[str] = []
        self.delete_delay = 0.0
        # While cleared, bulk deletes wait for it to be set again, at most _GATE_SECONDS each: a
        # test keeps a purge deleting for as long as its own steps take, however slow they are.
        self.deletes_open = threading.Event()
        self.deletes_open.set()
        # A store that deletes at most this many keys a second, whatever the requests at once
        # (0: as fast as the store behind): a bulk request waits its keys' share, one at a time.
        self.delete_keys_per_second = 0.0
        self.delete_pace = threading.Lock()
        self.fail_keys_containing: str | None = None
        self.deny_keys_containing: str | None = None
        self.fail_puts_containing: str | None = None
        self.fail_puts_left = 0
        self.transient_failures_left = 0
        self.throttled = 0
        # Keys whose reads (GET, HEAD) answer 503 SlowDown while they are listed here.
        self.failing_reads: set[str] = set()
        self.failed_reads = 0
        # Paths of the GETs forwarded, and a delay before each.
        self.reads: list[str] = []
        self.read_delay = 0.0
        # Every request that reached the proxy, by method, and a delay before each HEAD.
        self.requests: Counter[str] = Counter()
        self.head_delay = 0.0
        self.random_faults: RandomFaults | None = None
        # (monotonic time, "read" or "delete", path or key): a GET when its answer went out, a
        # key of a bulk delete when the request arrived. Orders a purge's reads and deletes.
        self.timeline: list[tuple[float, str, str]] = []
        # (method, path part): the answer to such a call is held back this long once the service
        # behind gave it (it acted, its caller hears late); each such path is listed as held.
        self.held_answers: dict[tuple[str, str], float] = {}
        self.held: list[str] = []

    def hold_answers(self, method: str, path_part: str, seconds: float) -> None:
        """Calls held before are forgotten: `answer_held` waits for one held from now on."""
        with self.lock:
            self.held_answers[(method, path_part)] = seconds
            self.held.clear()

    def release_answers(self) -> None:
        with self.lock:
            self.held_answers.clear()

    def holding_for(self, method: str, path: str) -> float:
        with self.lock:
            return max(
                (
                    seconds
                    for (held, part), seconds in self.held_answers.items()
                    if held == method and part in path
                ),
                default=0.0,
            )

    async def answer_held(self, path_part: str, timeout: float = 60) -> None:
        """Returns once the service acted on a call whose answer is held back, for a path
        holding `path_part`."""
        deadline = time.monotonic() + timeout
        while not any(path_part in path for path in self.held):
            if time.monotonic() > deadline:
                raise TimeoutError(f"no call for {path_part!r} reached the service behind the proxy")
            await asyncio.sleep(0.02)

    async def deletes_reached(self, at_least: int) -> None:
        """Returns once `at_least` bulk deletes have arrived (to kill a worker mid-purge)."""
        while self.delete_requests < at_least:
            await asyncio.sleep(0.05)


def _handler(
    upstream_port: int, faults: FaultPlan, upstream: S3Client | None
) -> type[BaseHTTPRequestHandler]:
    class Proxy(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *_: object) -> None:
            return

        def _forward(self) -> None:
            body = self._read_body()
            with faults.lock:
                faults.requests[self.command] += 1
            if self.command == "HEAD" and faults.head_delay:
                time.sleep(faults.head_delay)
            with faults.lock:
                fault = faults.random_faults.pick() if faults.random_faults else None
            if fault == "reset_before":
                self._reset()
                return
            if (self.command == "PUT" and self._fail_put()) or self._fail_read() or fault == "slow_down":
                self._slow_down()
                return
            is_bulk_delete = self.command == "POST" and "delete" in self.path.split("?", 1)[-1]
            if is_bulk_delete and (self._inject_delete_fault(body) or self._deny_keys(body)):
                return
            if self.command == "POST" and self.path.startswith("/batch/") and self._deny_batch_calls(body):
                return
            connection = http.client.HTTPConnection("127.0.0.1", upstream_port, timeout=120)
            headers = {name: value for name, value in self.headers.items() if name.lower() not in _HOP_BY_HOP}
            connection.request(self.command, self.path, body=body or None, headers=headers)
            response = connection.getresponse()
            payload = response.read()
            holding = faults.holding_for(self.command, self.path)
            if holding:
                with faults.lock:
                    faults.held.append(self.path)
                time.sleep(holding)
            if fault == "reset_after":
                connection.close()
                self._reset()
                return
            self.send_response(response.status, response.reason)
            # A HEAD answer has no body, but its Content-Length is the object's size.
            own_length = self.command != "HEAD"
            for name, value in response.getheaders():
                lowered = name.lower()
                if lowered not in _HOP_BY_HOP and not (own_length and lowered == "content-length"):
                    self.send_header(name, value)
            if own_length:
                self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(payload)
            connection.close()
            if self.command == "GET" and response.status == 200:
                with faults.lock:
                    faults.timeline.append((time.monotonic(), "read", self.path.split("?", 1)[0]))

        def _inject_delete_fault(self, body: bytes) -> bool:
            keys = [key.decode() for key in _KEY.findall(body)]
            with faults.lock:
                faults.delete_times.append(time.monotonic())
                poisoned = faults.fail_keys_containing is not None and any(
                    faults.fail_keys_containing in key for key in keys
                )
                transient = not poisoned and faults.transient_failures_left > 0
                if transient:
                    faults.transient_failures_left -= 1
                if poisoned or transient:
                    faults.throttled += 1
                else:
                    faults.delete_requests += 1
                    faults.deleted_keys.extend(keys)
                    arrived = time.monotonic()
                    faults.timeline.extend((arrived, "delete", key) for key in keys)
                delay = faults.delete_delay
                pace = faults.delete_keys_per_second
            if poisoned or transient:
                self._slow_down()
                return True
            if delay:
                time.sleep(delay)
            faults.deletes_open.wait(_GATE_SECONDS)
            if pace:
                with faults.delete_pace:
                    time.sleep(len(keys) / pace)
            return False

        def _read_body(self) -> bytes:
            """The request body; PyArrow's uploads arrive with Transfer-Encoding: chunked, which
            is undone here (the forwarded request then carries a Content-Length)."""
            if self.headers.get("Transfer-Encoding", "").lower() != "chunked":
                length = int(self.headers.get("Content-Length") or 0)
                return self.rfile.read(length) if length else b""
            body = b""
            while True:
                size = int(self.rfile.readline().split(b";", 1)[0].strip(), 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    return body
                body += self.rfile.read(size)
                self.rfile.readline()

        def _fail_put(self) -> bool:
            with faults.lock:
                chosen = faults.fail_puts_containing is not None and faults.fail_puts_containing in self.path
                if chosen and faults.fail_puts_left > 0:
                    faults.fail_puts_left -= 1
                    return True
            return False

        def _fail_read(self) -> bool:
            if self.command not in ("GET", "HEAD"):
                return False
            path = self.path.split("?", 1)[0]
            with faults.lock:
                chosen = any(path.endswith("/" + key) for key in faults.failing_reads)
                faults.failed_reads += chosen
                if self.command == "GET" and not chosen:
                    faults.reads.append(path)
                delay = faults.read_delay if self.command == "GET" else 0.0
            if delay and not chosen:
                time.sleep(delay)
            return chosen

        def _deny_keys(self, body: bytes) -> bool:
            """Answers a DeleteObjects itself: AccessDenied for the chosen keys, the others
            deleted for real (a forwarded, edited body would break the request's signature)."""
            keys = [key.decode() for key in _KEY.findall(body)]
            denied = faults.deny_keys_containing
            if upstream is None or denied is None or not any(denied in key for key in keys):
                return False
            bucket = self.path.split("?", 1)[0].strip("/").split("/", 1)[0]
            allowed = [key for key in keys if denied not in key]
            if allowed:
                upstream.delete_objects(Bucket=bucket, Delete={"Objects": [{"Key": key} for key in allowed]})
            parts = [f"<Deleted><Key>{escape(key)}</Key></Deleted>" for key in allowed]
            error = "<Code>AccessDenied</Code><Message>Access Denied</Message>"
            parts += [f"<Error><Key>{escape(key)}</Key>{error}</Error>" for key in keys if denied in key]
            payload = (
                '<?xml version="1.0" encoding="UTF-8"?>'
                '<DeleteResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">'
                + "".join(parts)
                + "</DeleteResult>"
            ).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/xml")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)
            return True

        def _deny_batch_calls(self, body: bytes) -> bool:
            """Answers a GCS JSON API batch itself: 403 for the calls naming a chosen object,
            the others sent to the store one by one and answered as it answered them."""
            denied = faults.deny_keys_containing
            calls = [(index.decode(), path.decode()) for index, path in _BATCH_CALL.findall(body)]
            if denied is None or not any(denied in unquote(path) for _, path in calls):
                return False
            boundary = "icepurge-proxy-batch"
            parts = []
            for index, path in calls:
                status = 403
                if denied not in unquote(path):
                    connection = http.client.HTTPConnection("127.0.0.1", upstream_port, timeout=120)
                    connection.request("DELETE", path)
                    status = connection.getresponse().status
                    connection.close()
                parts.append(
                    f"--{boundary}\r\nContent-Type: application/http\r\n"
                    f"Content-ID: <response-{index}>\r\n\r\n"
                    f"HTTP/1.1 {status} {http.HTTPStatus(status).phrase}\r\nContent-Length: 0\r\n\r\n\r\n"
                )
            payload = ("".join(parts) + f"--{boundary}--\r\n").encode()
            self.send_response(200)
            self.send_header("Content-Type", f"multipart/mixed; boundary={boundary}")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)
            return True

        def finish(self) -> None:
            # A reset connection has nothing left to flush.
            with suppress(OSError):
                super().finish()

        def _reset(self) -> None:
            """Closes the connection with a TCP reset and no answer."""
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            self.close_connection = True
            self.connection.close()

        def _slow_down(self) -> None:
            payload = (
                b'<?xml version="1.0" encoding="UTF-8"?><Error><Code>SlowDown</Code>'
                b"<Message>Please reduce your request rate.</Message></Error>"
            )
            self.send_response(503)
            self.send_header("Content-Type", "application/xml")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(payload)

        do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = _forward  # noqa: N815

    return Proxy


class _QuietServer(ThreadingHTTPServer):
    """A client that hangs up (a killed worker, an injected reset) is no error worth a traceback."""

    def handle_error(self, request: socket.socket | tuple[bytes, socket.socket], client_address: Any) -> None:
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


def through_proxy(properties: dict[str, str], port: int) -> dict[str, str]:
    """FileIO properties that send a purge's requests through the proxy on `port`."""
    return {**properties, "s3.endpoint": f"http://127.0.0.1:{port}"}


@contextmanager
def s3_proxy(
    upstream_port: int, upstream_properties: dict[str, str] | None = None
) -> Iterator[tuple[int, FaultPlan]]:
    faults = FaultPlan()
    upstream = s3_client(upstream_properties, max_connections=4) if upstream_properties else None
    server = _QuietServer(("127.0.0.1", 0), _handler(upstream_port, faults, upstream))
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield int(server.server_address[1]), faults
    finally:
        server.shutdown()
        server.server_close()
