"""A worker that uses every core it may: `count` worker processes on one task queue, each with
its own Temporal client, event loop and pools, under this supervisor. It serves their metrics at
the one ICEPURGE_METRICS_ADDRESS (each sample labelled with its process), passes SIGINT/SIGTERM
on so each hands its running steps back within its grace, and starts again a process that dies.
A process that dies within MIN_LIFETIME_SECONDS of starting stops them all: that is a setting or
a connection the operator must fix, not a crash to retry in a loop. The processes die with the
supervisor (a killed supervisor leaves no worker behind)."""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import logging
import os
import signal
import socket
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx

from icepurge.stores.s3_obstore import obstore_chosen
from icepurge.worker.metrics_merge import merge_metrics
from icepurge.worker.settings import WorkerSettings

log = logging.getLogger(__name__)

MIN_LIFETIME_SECONDS = 10.0
RESTART_DELAY_SECONDS = 1.0
_PR_SET_PDEATHSIG = 1


class WorkerProcessFailedError(RuntimeError):
    """A worker process died as it started: its log says why (settings, Temporal, the store)."""


# Set by the supervisor on its processes: the pid each must die with.
SUPERVISOR_PID = "ICEPURGE_SUPERVISOR_PID"


def bind_to_supervisor() -> None:
    """In a supervised process, first thing: the kernel kills it when the supervisor dies; one
    whose supervisor died before this line exits at once. (Set here rather than between fork
    and exec: the supervisor has threads, and code there may deadlock.)"""
    supervisor = os.environ.get(SUPERVISOR_PID)
    if supervisor is None:
        return
    ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != int(supervisor):
        raise SystemExit(f"worker process: its supervisor {supervisor} is gone")


def _free_loopback_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@dataclass
class _Child:
    index: int
    metrics_port: int | None
    process: asyncio.subprocess.Process | None = None
    started: float = 0.0

    async def start(self) -> None:
        env = {**os.environ, "ICEPURGE_WORKER_PROCESSES": "1", SUPERVISOR_PID: str(os.getpid())}
        if self.metrics_port is not None:
            env["ICEPURGE_METRICS_ADDRESS"] = f"127.0.0.1:{self.metrics_port}"
        self.process = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "icepurge.api.cli.main", "worker", env=env
        )
        self.started = time.monotonic()
        log.info("worker process %d started (pid %d)", self.index, self.process.pid)


async def supervise(settings: WorkerSettings, count: int) -> None:
    # A setting every process would refuse stops the worker here, not after each has died.
    obstore_chosen()
    ports = [_free_loopback_port() if settings.metrics_address else None for _ in range(count)]
    children = [_Child(index, port) for index, port in enumerate(ports)]
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stop.set)
    with _metrics_endpoint(settings.metrics_address, ports):
        for child in children:
            await child.start()
        try:
            await _keep_running(children, stop)
        finally:
            await _stop_all(children)


async def _keep_running(children: list[_Child], stop: asyncio.Event) -> None:
    stopping = asyncio.ensure_future(stop.wait())
    try:
        while not stop.is_set():
            exits = {asyncio.ensure_future(_exit_of(child)): child for child in children}
            done, _ = await asyncio.wait([stopping, *exits], return_when=asyncio.FIRST_COMPLETED)
            for waiting in exits:
                waiting.cancel()
            for finished in done - {stopping}:
                child = exits[finished]
                code = finished.result()
                lived = time.monotonic() - child.started
                # A stop sent to the whole process group reaches the processes and the supervisor
                # at once: a process may end before the supervisor has heard its own signal.
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(asyncio.shield(stopping), RESTART_DELAY_SECONDS)
                if stop.is_set():
                    return
                if lived < MIN_LIFETIME_SECONDS:
                    raise WorkerProcessFailedError(
                        f"worker process {child.index} exited with {code} {lived:.1f} s after it started: "
                        "see its log above; every worker process stops"
                    )
                log.warning(
                    "worker process %d exited with %s after %.0f s: starting it again",
                    child.index,
                    code,
                    lived,
                )
                await child.start()
    finally:
        stopping.cancel()


async def _exit_of(child: _Child) -> int:
    assert child.process is not None
    return await child.process.wait()


async def _stop_all(children: list[_Child]) -> None:
    """Each process gets SIGTERM and stops within its own grace; the supervisor waits for all."""
    running = [child.process for child in children if child.process and child.process.returncode is None]
    for process in running:
        with contextlib.suppress(ProcessLookupError):
            process.send_signal(signal.SIGTERM)
    await asyncio.gather(*(process.wait() for process in running))
    log.info("every worker process stopped")


@contextlib.contextmanager
def _metrics_endpoint(address: str | None, ports: list[int | None]) -> Iterator[None]:
    if address is None:
        yield
        return
    host, _, port = address.rpartition(":")
    server = ThreadingHTTPServer((host or "0.0.0.0", int(port)), _metrics_handler(ports))  # noqa: S104
    thread = threading.Thread(target=server.serve_forever, name="icepurge-metrics", daemon=True)
    thread.start()
    try:
        yield
    finally:
        server.shutdown()
        server.server_close()


def _metrics_handler(ports: list[int | None]) -> type[BaseHTTPRequestHandler]:
    class MergedMetrics(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # http.server's name
            texts = {}
            with httpx.Client(timeout=5) as client:
                for index, port in enumerate(ports):
                    # A process starting again has no endpoint for a moment: the others still answer.
                    with contextlib.suppress(httpx.HTTPError):
                        texts[str(index)] = client.get(f"http://127.0.0.1:{port}/metrics").text
            body = merge_metrics(texts).encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:
            # Prometheus scrapes every few seconds: no line in the worker's log for each.
            return None

    return MergedMetrics
