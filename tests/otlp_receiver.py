"""An OTLP/HTTP trace receiver on 127.0.0.1, the test's own: it keeps every span it is sent."""

from __future__ import annotations

import gzip
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.common.v1.common_pb2 import AnyValue

from icepurge.devstack.loopback_http import loopback_http

TRACES_PATH = "/v1/traces"


@dataclass(frozen=True)
class ReceivedSpan:
    service: str
    trace_id: str
    span_id: str
    parent_id: str
    name: str
    attributes: dict[str, object]


class ReceivedSpans:
    def __init__(self) -> None:
        self._spans: list[ReceivedSpan] = []
        self._lock = threading.Lock()

    def add(self, body: bytes) -> None:
        request = ExportTraceServiceRequest.FromString(body)
        received = []
        for resource_spans in request.resource_spans:
            resource = {item.key: _value(item.value) for item in resource_spans.resource.attributes}
            for scope_spans in resource_spans.scope_spans:
                for span in scope_spans.spans:
                    received.append(
                        ReceivedSpan(
                            service=str(resource.get("service.name", "")),
                            trace_id=span.trace_id.hex(),
                            span_id=span.span_id.hex(),
                            parent_id=span.parent_span_id.hex(),
                            name=span.name,
                            attributes={item.key: _value(item.value) for item in span.attributes},
                        )
                    )
        with self._lock:
            self._spans.extend(received)

    def all(self) -> list[ReceivedSpan]:
        with self._lock:
            return list(self._spans)


def _value(value: AnyValue) -> object:
    kind = value.WhichOneof("value")
    return getattr(value, kind) if kind else None


@contextmanager
def otlp_receiver() -> Iterator[tuple[str, ReceivedSpans]]:
    """Yields the endpoint (for OTEL_EXPORTER_OTLP_ENDPOINT) and what it received."""
    spans = ReceivedSpans()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            if self.headers.get("Content-Encoding") == "gzip":
                body = gzip.decompress(body)
            if self.path != TRACES_PATH:
                self.send_error(404)
                return
            spans.add(body)
            answer = ExportTraceServiceResponse().SerializeToString()
            self.send_response(200)
            self.send_header("Content-Type", "application/x-protobuf")
            self.send_header("Content-Length", str(len(answer)))
            self.end_headers()
            self.wfile.write(answer)

        def log_message(self, format: str, *args: object) -> None:
            return None

    with loopback_http(Handler) as url:
        yield url, spans
