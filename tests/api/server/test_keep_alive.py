"""The API keeps an idle client connection open longer than uvicorn's 5 s: a REST client of the
front door sits idle while it writes a table, then sends its DELETE on the same connection, and
one sent just as the server closed it failed before reaching the API (bench.front_door_load)."""

from __future__ import annotations

import http.client
import time
from urllib.parse import urlparse

from icepurge.api.server.settings import ApiSettings
from icepurge.devstack.api_server import serve_api

IDLE_SECONDS = 6


def _healthz(connection: http.client.HTTPConnection) -> tuple[int, tuple[str, int]]:
    """The answer's status, and the client end of the connection it came on."""
    connection.request("GET", "/healthz")
    answer = connection.getresponse()
    answer.read()
    assert connection.sock is not None
    return answer.status, connection.sock.getsockname()


def test_a_connection_idle_longer_than_uvicorns_default_is_still_open(api_settings: ApiSettings) -> None:
    with serve_api(api_settings) as url:
        address = urlparse(url)
        connection = http.client.HTTPConnection(address.hostname or "127.0.0.1", address.port, timeout=10)
        try:
            first = _healthz(connection)
            time.sleep(IDLE_SECONDS)
            assert _healthz(connection) == first == (200, first[1])
        finally:
            connection.close()
