"""Trino's client protocol, as far as the engines tier needs it: a statement posted to
/v1/statement, then its nextUri followed until the answer is complete."""

from __future__ import annotations

import time
from typing import Any

import httpx


class TrinoError(RuntimeError):
    """A statement Trino refused; the message is Trino's."""


def run_statement(url: str, statement: str, timeout: float = 300.0) -> list[list[Any]]:
    """The statement's rows; TrinoError with Trino's message if it failed."""
    deadline = time.monotonic() + timeout
    headers = {"X-Trino-User": "icepurge-tests"}
    with httpx.Client(timeout=60) as client:
        answer = client.post(f"{url}/v1/statement", content=statement, headers=headers).json()
        rows: list[list[Any]] = []
        while True:
            rows.extend(answer.get("data", []))
            if "error" in answer:
                raise TrinoError(f"{answer['error'].get('errorName')}: {answer['error'].get('message')}")
            following = answer.get("nextUri")
            if following is None:
                return rows
            if time.monotonic() > deadline:
                raise TrinoError(f"no answer within {timeout:.0f} s: {statement}")
            answer = client.get(following, headers=headers).json()
