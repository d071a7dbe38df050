"""The API keeps an idle client connection open longer than uvicorn's 5 s: a REST client of the
front door sits idle while it writes a table, then sends its DELETE on the same connection, and
one sent just as the server closed it failed before reaching the API (bench.front_door_load)."""

from __future__ import annotations

import socket
import time
from urllib.parse import urlparse

from icepurge.api.server.settings import ApiSettings
from icepurge.devstack.api_server import serve_api

IDLE_SECONDS = 6


def _get(connection: socket.socket, host: str) -> bytes:
    connection.sendall(f"GET /healthz HTTP/1.1\r\nHost: {host}\r\n\r\n".encode())
    return connection.recv(65536)


def test_a_connection_idle_longer_than_uvicorns_default_is_still_open(api_settings: ApiSettings) -> None:
    with serve_api(api_settings) as url:
        address = urlparse(url)
        host, port = address.hostname or "127.0.0.1", address.port or 80
        with socket.create_connection((host, port), timeout=10) as connection:
            assert _get(connection, f"{host}:{port}").startswith(b"HTTP/1.1 ")
            time.sleep(IDLE_SECONDS)
            assert _get(connection, f"{host}:{port}").startswith(b"HTTP/1.1 ")
