"""A Java catalog server of the engines tier on a loopback port, over the stack's S3: started
as a service process, ready once its port answers, stopped with it."""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from icepurge.devstack.process import ServiceProcess

STARTUP_SECONDS = 120


class EngineServer:
    # Where on its port the server answers Iceberg's REST API.
    rest_path: ClassVar[str] = ""

    def __init__(self, state_dir: Path, port: int, s3_properties: dict[str, str]) -> None:
        self.state_dir = state_dir
        self.port = port
        self.s3_properties = s3_properties
        self._process: ServiceProcess | None = None

    @property
    def uri(self) -> str:
        return f"http://127.0.0.1:{self.port}{self.rest_path}"

    def _run(self, name: str, command: list[str], env: dict[str, str]) -> None:
        self.state_dir.mkdir(parents=True, exist_ok=True)
        self._process = ServiceProcess(name, command, self.state_dir / f"{name}.log", env=env)
        self._process.start()
        self._process.wait_for_port(self.port, timeout=STARTUP_SECONDS)

    def stop(self) -> None:
        if self._process is not None:
            self._process.stop()
            self._process = None
