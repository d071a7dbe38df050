"""A failed connect to Temporal, told as one line that names what to fix. The SDK's core says
what happened in its own words (rustls, tonic, hyper, and the HTTP status a proxy in front of
Temporal answered with); each kind of refusal is recognised here. None of them is retried: a
certificate or a key doesn't change by asking again."""

from __future__ import annotations

from collections.abc import Callable

from icepurge.connection.errors import TemporalRefusedError, TemporalUnreachableError
from icepurge.connection.temporal_target import TemporalTarget

_UNTRUSTED_SERVER = ("UnknownIssuer", "certificate verify failed", "InvalidCertificate", "NotValidForName")
_CLIENT_CERT_REFUSED = (
    "400 Bad Request",
    "CertificateRequired",
    "BadCertificate",
    "CertificateExpired",
    "UnknownCA",
    "certificate required",
)
_UNAUTHENTICATED = ("401 Unauthorized", "code: Unauthenticated", "code: PermissionDenied", "403 Forbidden")
# A TLS endpoint answers a plaintext HTTP/2 preface with a TLS record (hyper: FRAME_SIZE_ERROR)
# or closes the connection, whichever reaches the client first.
_TLS_SPOKEN_TO_PLAINTEXT = ("FRAME_SIZE_ERROR", "connection closed", "InvalidContentType", "CorruptMessage")


def _any(error: str, markers: tuple[str, ...]) -> bool:
    return any(marker in error for marker in markers)


def _untrusted_server(_: TemporalTarget) -> str:
    return (
        "its certificate is not signed by the CA this client trusts; set "
        "TEMPORAL_TLS_SERVER_CA_CERT_PATH to the CA that signed it (and TEMPORAL_TLS_SERVER_NAME if it "
        "is issued for another name)"
    )


def _client_certificate(target: TemporalTarget) -> str:
    if not target.mutual_tls:
        return (
            "it requires a client certificate (mutual TLS); set TEMPORAL_TLS_CLIENT_CERT_PATH and "
            "TEMPORAL_TLS_CLIENT_KEY_PATH"
        )
    return (
        "it refused the client certificate TEMPORAL_TLS_CLIENT_CERT_PATH names; it must be signed by a "
        "CA the server trusts, valid now, and match TEMPORAL_TLS_CLIENT_KEY_PATH"
    )


def _credentials(target: TemporalTarget) -> str:
    if target.api_key:
        return (
            f"it refused the API key; set TEMPORAL_API_KEY to a current key allowed on namespace "
            f"{target.namespace!r}"
        )
    return (
        "it requires credentials; set TEMPORAL_API_KEY (Temporal Cloud) or a client certificate "
        "(TEMPORAL_TLS_CLIENT_CERT_PATH, TEMPORAL_TLS_CLIENT_KEY_PATH)"
    )


def _speaks_tls(target: TemporalTarget) -> str | None:
    if target.tls:
        return None
    return (
        "it answered a plaintext connection as a TLS endpoint does; set TEMPORAL_TLS=true (and "
        "TEMPORAL_TLS_SERVER_CA_CERT_PATH for a private CA)"
    )


_REFUSALS: tuple[tuple[tuple[str, ...], Callable[[TemporalTarget], str | None]], ...] = (
    (_UNTRUSTED_SERVER, _untrusted_server),
    (_CLIENT_CERT_REFUSED, _client_certificate),
    (_UNAUTHENTICATED, _credentials),
    (_TLS_SPOKEN_TO_PLAINTEXT, _speaks_tls),
)


def connect_failure(target: TemporalTarget, error: str) -> TemporalUnreachableError:
    where = f"Temporal at {target.address} ({target.secured_by})"
    for markers, explain in _REFUSALS:
        if _any(error, markers) and (why := explain(target)) is not None:
            return TemporalRefusedError(f"{where}: {why}")
    refused = "refused the connection" if "Connection refused" in error else "did not answer"
    return TemporalUnreachableError(
        f"{where} {refused}: start it (`make run`), or point ICEPURGE_TEMPORAL_ADDRESS or "
        "TEMPORAL_ADDRESS (and the namespace) at your cluster"
    )
