"""A real HTTP receiver for the webhook sink on loopback: records every delivery and checks its
signature. Used by the event tests and the event-overhead benchmark."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler

from icepurge.activities.signals.webhook_sink import (
    EVENT_ID_HEADER,
    SIGNATURE_HEADER,
    TIMESTAMP_HEADER,
    verify_signature,
)
from icepurge.contract.events import PurgeEvent
from icepurge.devstack.loopback_http import loopback_http

WEBHOOK_SECRET = "icepurge-dev-webhook-secret"  # noqa: S105  # a loopback receiver's test secret


@dataclass
class Received:
    """Every delivery attempt, in arrival order, and whether its signature verified."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    bodies: list[bytes] = field(default_factory=list)
    header_ids: list[str] = field(default_factory=list)
    signatures_valid: list[bool] = field(default_factory=list)
    attempts: int = 0
    fail_with: int | None = None
    # Seconds each answer takes: a slow receiver.
    delay: float = 0.0

    def events(self) -> list[PurgeEvent]:
        with self.lock:
            return [PurgeEvent.model_validate_json(body) for body in self.bodies]


def _handler(received: Received) -> type[BaseHTTPRequestHandler]:
    class Receiver(BaseHTTPRequestHandler):
        def log_message(self, *_: object) -> None:
            return

        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers["Content-Length"]))
            time.sleep(received.delay)
            with received.lock:
                received.attempts += 1
                failing = received.fail_with
                if failing is None:
                    received.bodies.append(body)
                    received.header_ids.append(self.headers[EVENT_ID_HEADER])
                    received.signatures_valid.append(
                        verify_signature(
                            WEBHOOK_SECRET,
                            self.headers[TIMESTAMP_HEADER],
                            body,
                            self.headers[SIGNATURE_HEADER],
                        )
                    )
            self.send_response(failing or 204)
            self.send_header("Content-Length", "0")
            self.end_headers()

    return Receiver


@contextmanager
def webhook_receiver(fail_with: int | None = None) -> Iterator[tuple[str, Received]]:
    received = Received(fail_with=fail_with)
    with loopback_http(_handler(received)) as url:
        yield f"{url}/hooks/icepurge", received
