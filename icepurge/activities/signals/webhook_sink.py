"""Posts each event to an HTTP endpoint, signed so the receiver can trust it.

Signature: hex HMAC-SHA256 over "<timestamp>.<body>" with the shared secret, sent as
`Icepurge-Signature: v1=<hex>` with `Icepurge-Timestamp` (Unix seconds) and `Icepurge-Event-Id`
(the same id on a redelivery). Retries are bounded, and once the receiver stayed unavailable
(5xx, 408, 429, no answer) through all of them the sink stays closed for a cool-down, so a dead
receiver costs each batch nothing more. A receiver that refuses one event (other 4xx) is up: that
event fails at once and the next goes out as usual."""

from __future__ import annotations

import hashlib
import hmac
import threading
import time

import httpx

from icepurge.activities.signals.event_sinks import WEBHOOK_SINK
from icepurge.contract.events import PurgeEvent
from icepurge.stores.backoff import full_jitter

SIGNATURE_HEADER = "Icepurge-Signature"
TIMESTAMP_HEADER = "Icepurge-Timestamp"
EVENT_ID_HEADER = "Icepurge-Event-Id"


_UNAVAILABLE = frozenset({408, 429})


class WebhookUnavailableError(ConnectionError):
    """The receiver didn't answer well within the sink's attempts, or is cooling down."""


class WebhookRefusedError(ValueError):
    """The receiver answered this event with a 4xx: it is up, but won't take this one."""


def signature(secret: str, timestamp: str, body: bytes) -> str:
    digest = hmac.new(secret.encode(), timestamp.encode() + b"." + body, hashlib.sha256).hexdigest()
    return f"v1={digest}"


def verify_signature(secret: str, timestamp: str, body: bytes, received: str) -> bool:
    """For receivers: true when `received` signs this body and timestamp with `secret`."""
    return hmac.compare_digest(signature(secret, timestamp, body), received)


class WebhookSink:
    name = WEBHOOK_SINK

    def __init__(
        self, url: str, secret: str, max_attempts: int, timeout_seconds: float, cooldown_seconds: float
    ) -> None:
        self._url = url
        self._secret = secret
        self._max_attempts = max_attempts
        self._cooldown = cooldown_seconds
        self._client = httpx.Client(timeout=timeout_seconds, follow_redirects=False)
        self._closed_until = 0.0
        self._lock = threading.Lock()

    def deliver(self, event: PurgeEvent) -> None:
        with self._lock:
            if time.monotonic() < self._closed_until:
                raise WebhookUnavailableError("webhook receiver failed recently; cooling down")
        body = event.model_dump_json().encode()
        last_error = ""
        for attempt in range(self._max_attempts):
            if attempt:
                time.sleep(full_jitter(attempt, 0.25, 4.0))
            timestamp = str(int(time.time()))
            headers = {
                "Content-Type": "application/json",
                SIGNATURE_HEADER: signature(self._secret, timestamp, body),
                TIMESTAMP_HEADER: timestamp,
                EVENT_ID_HEADER: event.event_id,
            }
            try:
                response = self._client.post(self._url, content=body, headers=headers)
            except httpx.HTTPError as error:
                last_error = type(error).__name__
                continue
            if response.is_success:
                return
            last_error = f"HTTP {response.status_code}"
            if response.status_code < 500 and response.status_code not in _UNAVAILABLE:
                raise WebhookRefusedError(f"webhook refused event {event.event_id}: {last_error}")
        with self._lock:
            self._closed_until = time.monotonic() + self._cooldown
        raise WebhookUnavailableError(f"webhook unavailable for event {event.event_id}: {last_error}")
