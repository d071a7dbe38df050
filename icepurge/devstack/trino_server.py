"""A single-node Trino (coordinator and worker in one JVM; `make engines` installs Trino's core
server and its Iceberg plugin from Maven Central) with the catalogs given, on a loopback port:
the engines tier's Trino. It needs Java 25."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from icepurge.devstack.engines_cache import engine_dir, java25
from icepurge.devstack.process import ServiceProcess

STARTED = "SERVER STARTED"
# A 2-core test machine: one small heap, small query memory.
_JVM = [
    "-server",
    "-Xmx1G",
    "-XX:+UseG1GC",
    "-XX:+ExitOnOutOfMemoryError",
    "-Djdk.attach.allowAttachSelf=true",
]


def _properties(values: dict[str, str]) -> str:
    return "".join(f"{key}={value}\n" for key, value in values.items())


@dataclass
class TrinoServer:
    state_dir: Path
    port: int
    catalogs: dict[str, dict[str, str]]
    _process: ServiceProcess | None = field(default=None, init=False)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> None:
        bin_dir = Path(java25("Trino")).parent
        etc = self.state_dir / "etc"
        (etc / "catalog").mkdir(parents=True, exist_ok=True)
        (etc / "node.properties").write_text(
            _properties({"node.environment": "test", "node.id": "icepurge-engines"})
        )
        (etc / "jvm.config").write_text("\n".join(_JVM) + "\n")
        (etc / "config.properties").write_text(
            _properties(
                {
                    "coordinator": "true",
                    "node-scheduler.include-coordinator": "true",
                    "http-server.http.port": str(self.port),
                    "discovery.uri": self.url,
                    "query.max-memory": "512MB",
                    "query.max-memory-per-node": "256MB",
                    "memory.heap-headroom-per-node": "256MB",
                }
            )
        )
        for name, properties in self.catalogs.items():
            (etc / "catalog" / f"{name}.properties").write_text(_properties(properties))
        launcher = engine_dir("trino") / "server" / "bin" / "launcher"
        self._process = ServiceProcess(
            "trino",
            [str(launcher), "run", f"--etc-dir={etc}", f"--data-dir={self.state_dir / 'data'}"],
            self.state_dir / "trino.log",
            env={"JAVA_HOME": str(bin_dir.parent), "PATH": f"{bin_dir}:{os.environ.get('PATH', '')}"},
        )
        self._process.start()
        self._process.wait_for_log(STARTED, timeout=240)

    def stop(self) -> None:
        if self._process is not None:
            self._process.stop()
            self._process = None
