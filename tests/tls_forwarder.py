"""A TLS endpoint in front of a plain HTTP service on loopback: it terminates TLS with the test
CA's server certificate and passes the bytes on, so a client's TLS settings meet a real store."""

from __future__ import annotations

import socket
import socketserver
import ssl
import threading
from collections.abc import Iterator
from contextlib import contextmanager, suppress

from icepurge.devstack.tls_certificates import TlsFiles

_CHUNK = 65536


def _pipe(source: socket.socket, target: socket.socket) -> None:
    # A reset or a closed end ends the pipe, in either direction.
    with suppress(OSError):
        while data := source.recv(_CHUNK):
            target.sendall(data)
    for end in (source, target):
        with suppress(OSError):
            end.shutdown(socket.SHUT_RDWR)


@contextmanager
def tls_forwarder(upstream_port: int, files: TlsFiles) -> Iterator[int]:
    """The port that answers TLS for the service at `upstream_port`."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(files.server.cert, files.server.key)

    class Forward(socketserver.BaseRequestHandler):
        def handle(self) -> None:
            try:
                client = context.wrap_socket(self.request, server_side=True)
            except (ssl.SSLError, OSError):
                return
            with client, socket.create_connection(("127.0.0.1", upstream_port)) as upstream:
                back = threading.Thread(target=_pipe, args=(upstream, client), daemon=True)
                back.start()
                _pipe(client, upstream)
                back.join()

    server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), Forward)
    server.daemon_threads = True
    serving = threading.Thread(target=server.serve_forever, daemon=True)
    serving.start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()
