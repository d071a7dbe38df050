"""A test receiver's HTTP server on 127.0.0.1, on a free port, served from a thread of its own."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@contextmanager
def loopback_http(handler: type[BaseHTTPRequestHandler]) -> Iterator[str]:
    """Yields the server's base URL (http://127.0.0.1:<port>); shut down on leaving."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
