"""An engine's SQL session in a process of its own (Spark's, Flink's: a driver script run by the
engine's own Python from `make engines`), sent one statement at a time: the session's settings as
the first JSON line, then a JSON line a statement and a JSON line an answer."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any


class SqlSessionError(RuntimeError):
    """A statement the engine refused; the message is the engine's."""


class SqlSession:
    def __init__(self, process: subprocess.Popen[str], version: str) -> None:
        self._process = process
        self.version = version

    def sql(self, statement: str) -> list[dict[str, Any]]:
        """The statement's rows; SqlSessionError with the engine's message if it refused."""
        stdin, stdout = self._process.stdin, self._process.stdout
        assert stdin is not None and stdout is not None
        stdin.write(json.dumps({"sql": statement}) + "\n")
        stdin.flush()
        line = stdout.readline()
        if not line:
            raise SqlSessionError(f"the session exited ({self._process.wait()}) on: {statement}")
        answer = json.loads(line)
        if "error" in answer:
            raise SqlSessionError(answer["error"])
        rows: list[dict[str, Any]] = answer["rows"]
        return rows


@contextmanager
def sql_session(python: Path, driver: Path, settings: dict[str, str], log: Path) -> Iterator[SqlSession]:
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("a") as errors:
        process = subprocess.Popen(
            [str(python), str(driver)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=errors,
            text=True,
        )
    try:
        assert process.stdin is not None and process.stdout is not None
        process.stdin.write(json.dumps(settings) + "\n")
        process.stdin.flush()
        ready = process.stdout.readline()
        if not ready:
            raise SqlSessionError(f"{driver.stem} did not start ({process.wait()}); see {log}")
        yield SqlSession(process, json.loads(ready)["ready"])
    finally:
        if process.stdin is not None:
            process.stdin.close()
        try:
            process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
