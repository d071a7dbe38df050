"""The HTTP API served by a real uvicorn server on a free loopback port, in its own thread
(tests; `icepurge api` serves it as its own process)."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import uvicorn

from icepurge.api.server.app import create_app
from icepurge.api.server.settings import ApiSettings
from icepurge.devstack.free_ports import free_ports


@contextmanager
def serve_api(settings: ApiSettings, port: int | None = None) -> Iterator[str]:
    """On `port`, or a free one."""
    port = port or free_ports(1)[0]
    config = uvicorn.Config(
        create_app(settings),
        host="127.0.0.1",
        port=port,
        log_level="warning",
        timeout_keep_alive=settings.api_keep_alive_seconds,
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, name="api-server", daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("the API server did not start")
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=15)
