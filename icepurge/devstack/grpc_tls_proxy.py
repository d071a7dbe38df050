"""A TLS-terminating gRPC proxy in front of the Temporal dev server: nginx (Debian's package) with
`grpc_pass`, verifying client certificates against the test CA for mutual TLS, and, given an API
key, refusing any call that doesn't carry it as the SDK sends it (`authorization: Bearer <key>`)."""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from icepurge.devstack.free_ports import free_ports
from icepurge.devstack.tls_certificates import TlsFiles

# Long polls: a worker's poll waits up to a minute for a task.
_POLL_SECONDS = 120
_START_SECONDS = 10.0


def nginx_missing() -> str | None:
    """Why no proxy can start here, if none can."""
    if shutil.which("nginx") is None:
        return "nginx not found: `make nginx` installs Debian's package (as root)"
    return None


@dataclass(frozen=True)
class ProxyChecks:
    """mutual: a client certificate the test CA signed is required; api_key: every call must carry
    it."""

    mutual: bool = False
    api_key: str | None = None


def nginx_config(directory: Path, connections: int, http: str) -> str:
    """An nginx config whose pid, error log and temporary files stay in `directory`, with `http`
    (its upstreams and servers) as the http block's own."""
    kinds = ("client_body", "proxy", "fastcgi", "uwsgi", "scgi")
    temp = "\n    ".join(f"{kind}_temp_path {directory / kind};" for kind in kinds)
    return f"""
worker_processes 1;
pid {directory / "nginx.pid"};
error_log {directory / "error.log"} info;
events {{ worker_connections {connections}; }}
http {{
    access_log off;
    {temp}
    {http}
}}
"""


def _config(directory: Path, port: int, upstream: str, files: TlsFiles, checks: ProxyChecks) -> str:
    verify = f"ssl_client_certificate {files.ca};\n        ssl_verify_client on;" if checks.mutual else ""
    key = checks.api_key
    check = f'if ($http_authorization != "Bearer {key}") {{ return 401; }}' if key else ""
    return nginx_config(
        directory,
        256,
        f"""server {{
        listen 127.0.0.1:{port} ssl http2;
        ssl_certificate {files.server.cert};
        ssl_certificate_key {files.server.key};
        {verify}
        location / {{
            {check}
            grpc_pass grpc://{upstream};
            grpc_read_timeout {_POLL_SECONDS}s;
            grpc_send_timeout {_POLL_SECONDS}s;
        }}
    }}""",
    )


@contextmanager
def grpc_tls_proxy(
    directory: Path, upstream: str, files: TlsFiles, checks: ProxyChecks | None = None
) -> Iterator[str]:
    """The proxy's host:port; `upstream`: the Temporal frontend's, spoken to in plaintext."""
    directory.mkdir(parents=True, exist_ok=True)
    (port,) = free_ports(1)
    config = directory / "nginx.conf"
    config.write_text(_config(directory, port, upstream, files, checks or ProxyChecks()))
    process = subprocess.Popen(
        ["nginx", "-p", str(directory), "-c", str(config), "-g", "daemon off;"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        _wait_for(port, process)
        yield f"127.0.0.1:{port}"
    finally:
        process.terminate()
        process.wait(timeout=10)


def _wait_for(port: int, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + _START_SECONDS
    while time.monotonic() < deadline:
        if process.poll() is not None:
            error = process.stderr.read().decode() if process.stderr else ""
            raise RuntimeError(f"nginx exited at start: {error.strip()}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError(f"nginx did not listen on 127.0.0.1:{port} within {_START_SECONDS:.0f} s")
