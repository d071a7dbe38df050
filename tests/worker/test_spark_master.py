"""Reading a starting Spark Master's workers: every answer before its state is 0 workers, never
an error (a clean clone's engines tier failed on the HTML page a Master answered /json/ with
for a moment while it started)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import ClassVar

import pytest

from icepurge.devstack.loopback_http import loopback_http
from tests.spark_master import alive_spark_workers

# What a starting Master answered /json/ with here, in the order it answered them.
ANSWERS = [
    b'<!DOCTYPE html><html data-bs-theme="light"><head></head><body>Spark Master</body></html>',
    json.dumps({"status": "STANDBY", "aliveworkers": 0}).encode(),
    json.dumps({"status": "ALIVE", "aliveworkers": 2}).encode(),
]


class _StartingMaster(BaseHTTPRequestHandler):
    answers: ClassVar[list[bytes]] = []

    def do_GET(self) -> None:
        body = self.answers.pop(0)
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        return None


@pytest.fixture
def master_ui() -> Iterator[str]:
    _StartingMaster.answers = list(ANSWERS)
    with loopback_http(_StartingMaster) as url:
        yield url


def test_a_starting_master_has_no_workers_until_it_says_so(master_ui: str) -> None:
    assert [alive_spark_workers(master_ui) for _ in ANSWERS] == [0, 0, 2]


def test_a_master_not_listening_yet_has_no_workers() -> None:
    with ThreadingHTTPServer(("127.0.0.1", 0), _StartingMaster) as closed:
        address = f"http://127.0.0.1:{closed.server_address[1]}"
    assert alive_spark_workers(address) == 0
