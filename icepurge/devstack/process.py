"""A child service process: started in its own session, waited for, stopped without leftovers."""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

_PR_SET_PDEATHSIG = 1
# A worker's sandbox imports the workflow modules again for every new workflow: with no cached
# bytecode it compiles them from source each time (a small purge's workflow tasks: 27 → 41 ms of
# CPU, bench.workflow_replay_cost).
# Some shells set this; the services cache their bytecode whatever the shell says.
_NOT_PASSED_ON = frozenset({"PYTHONDONTWRITEBYTECODE"})


def _die_with_parent() -> None:
    """Runs in the child before exec: if whoever started the stack is killed (even with -9),
    the kernel kills the service too, so no test run or `make run` leaves services behind."""
    if sys.platform == "linux":
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)


def _passed_on(environment: os._Environ[str]) -> dict[str, str]:
    return {name: value for name, value in environment.items() if name not in _NOT_PASSED_ON}


class ServiceFailedError(RuntimeError):
    """A service exited or never became ready; the message points at its log and quotes its end."""


# The end of a failed service's log, quoted in the error: a run whose temporary files are gone
# (a CI machine) still says why the service stopped.
_QUOTED_LOG_LINES = 20


def port_open(port: int, host: str = "127.0.0.1") -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.settimeout(0.5)
        return probe.connect_ex((host, port)) == 0


# What `icepurge worker` logs once it polls its task queue (icepurge/worker/run.py).
WORKER_READY = "icepurge worker polling"


class ServiceProcess:
    def __init__(
        self,
        name: str,
        command: list[str],
        log_path: Path,
        env: dict[str, str] | None = None,
        stop_grace: float | None = None,
    ) -> None:
        """`stop_grace`: at most this long between SIGTERM and SIGKILL, whatever the stack's
        grace, for a service whose own graceful stop never fits in one."""
        self.name = name
        self.command = command
        self.log_path = log_path
        self.env = env
        self.stop_grace = stop_grace
        self._process: subprocess.Popen[bytes] | None = None

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process else None

    def start(self) -> None:
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        with self.log_path.open("ab") as log:
            self._process = subprocess.Popen(
                self.command,
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
                env={**_passed_on(os.environ), **(self.env or {})},
                preexec_fn=_die_with_parent,  # noqa: PLW1509  # the stack is started from one thread
            )

    def running(self) -> bool:
        return self._process is not None and self._process.poll() is None

    def wait_for_port(self, port: int, timeout: float = 60.0, host: str = "127.0.0.1") -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if not self.running():
                raise self._failed(f"{self.name} exited early")
            if port_open(port, host):
                return
            time.sleep(0.2)
        raise self._failed(f"{self.name} not listening on port {port} after {timeout:.0f}s")

    def wait_for_log(self, text: str, timeout: float = 180.0) -> None:
        """Waits until the service's log contains `text` (a worker says it is polling)."""
        deadline = time.monotonic() + timeout
        while text not in self.log_path.read_text(errors="replace"):
            if time.monotonic() > deadline or not self.running():
                raise self._failed(f"{self.name} did not start")
            time.sleep(0.5)

    def _failed(self, what: str) -> ServiceFailedError:
        try:
            lines = self.log_path.read_text(errors="replace").splitlines()[-_QUOTED_LOG_LINES:]
        except FileNotFoundError:
            lines = []
        ending = "\n".join(lines) or "(empty)"
        return ServiceFailedError(f"{what}; see {self.log_path}, which ends:\n{ending}")

    def signal(self, signum: int) -> None:
        """Sends `signum` to the service's own process (a test's pause or thaw)."""
        if self.running() and self._process is not None:
            os.kill(self._process.pid, signum)

    def kill(self) -> None:
        """SIGKILL the whole process group at once: a crash, for fault-injection tests."""
        if self.running() and self._process is not None:
            os.killpg(self._process.pid, signal.SIGKILL)
            self._process.wait()

    def stop(self, grace: float = 10.0) -> None:
        stop_together([self], grace)

    def terminate(self) -> None:
        """SIGTERM to the whole process group, without waiting."""
        if self.running() and self._process is not None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self._process.pid, signal.SIGTERM)

    def wait_or_kill(self, deadline: float) -> None:
        """Waits until `deadline` (monotonic), then SIGKILLs what is left of the group."""
        process = self._process
        if process is None:
            return
        try:
            process.wait(timeout=max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            # weed can ignore SIGTERM for a minute; nothing of it may outlive the stack.
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            process.wait()


def stop_together(services: Sequence[ServiceProcess], grace: float) -> None:
    """SIGTERM to every service at once, then one shared grace: stopping takes the slowest
    service's time (bounded by `grace`), not the sum of them."""
    for service in services:
        service.terminate()
    began = time.monotonic()
    for service in services:
        own = grace if service.stop_grace is None else min(grace, service.stop_grace)
        service.wait_or_kill(began + own)
