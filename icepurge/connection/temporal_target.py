"""Where and how a process reaches Temporal, configured the way Temporal's own tools are: the SDK's
environment configuration (`temporalio.envconfig`: TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE,
TEMPORAL_API_KEY, TEMPORAL_TLS, TEMPORAL_TLS_SERVER_CA_CERT_PATH, TEMPORAL_TLS_CLIENT_CERT_PATH,
TEMPORAL_TLS_CLIENT_KEY_PATH, TEMPORAL_TLS_SERVER_NAME, TEMPORAL_PROFILE and the TOML profiles of
TEMPORAL_CONFIG_FILE), with ICEPURGE_TEMPORAL_ADDRESS and ICEPURGE_TEMPORAL_NAMESPACE winning
where they are set. The API key and the client key are secrets: never in a repr, a log or a
message."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime

from cryptography import x509
from temporalio.envconfig import ClientConfigProfile
from temporalio.service import TLSConfig

from icepurge.connection.errors import TemporalConfigError
from icepurge.connection.settings import TemporalSettings

DEFAULT_ADDRESS = "127.0.0.1:7233"


@dataclass(frozen=True)
class TemporalTarget:
    address: str
    namespace: str
    tls: bool | TLSConfig = field(repr=False)
    api_key: str | None = field(default=None, repr=False)
    rpc_metadata: Mapping[str, str] = field(default_factory=dict, repr=False)

    @property
    def mutual_tls(self) -> bool:
        return isinstance(self.tls, TLSConfig) and self.tls.client_cert is not None

    @property
    def secured_by(self) -> str:
        """How the connection is secured, for messages: never a secret."""
        way = "mTLS" if self.mutual_tls else "TLS" if self.tls else "plaintext"
        return f"{way} and an API key" if self.api_key else way


def temporal_target(settings: TemporalSettings) -> TemporalTarget:
    try:
        config = ClientConfigProfile.load().to_client_connect_config()
    except (OSError, RuntimeError, ValueError) as error:
        raise TemporalConfigError(
            f"Temporal's client configuration can't be read ({_reason(error)}): fix the TEMPORAL_* "
            "variables, TEMPORAL_PROFILE or the TOML file TEMPORAL_CONFIG_FILE names"
        ) from None
    tls = config.get("tls", False)
    if isinstance(tls, TLSConfig) and tls.client_cert is not None:
        _check_client_certificate(tls.client_cert)
    explicit = settings.model_fields_set
    address = settings.temporal_address if "temporal_address" in explicit else None
    namespace = settings.temporal_namespace if "temporal_namespace" in explicit else None
    return TemporalTarget(
        address=address or config.get("target_host") or DEFAULT_ADDRESS,
        namespace=namespace or config.get("namespace") or settings.temporal_namespace,
        tls=tls,
        api_key=config.get("api_key"),
        rpc_metadata=config.get("rpc_metadata", {}),
    )


def _reason(error: BaseException) -> str:
    """What went wrong, without echoing a file's contents: a path or the SDK's own line."""
    if isinstance(error, OSError) and error.filename:
        return f"{error.strerror or type(error).__name__}: {error.filename}"
    return str(error).splitlines()[0] if str(error) else type(error).__name__


def _check_client_certificate(pem: bytes) -> None:
    """An expired (or not yet valid) client certificate, said before any server refuses it."""
    try:
        certificate = x509.load_pem_x509_certificate(pem)
    except ValueError:
        raise TemporalConfigError(
            "TEMPORAL_TLS_CLIENT_CERT_PATH names no PEM certificate: point it at the client certificate"
        ) from None
    now = datetime.now(UTC)
    if certificate.not_valid_after_utc < now:
        raise TemporalConfigError(
            f"the client certificate TEMPORAL_TLS_CLIENT_CERT_PATH names expired on "
            f"{certificate.not_valid_after_utc:%Y-%m-%d %H:%M} UTC: renew it"
        )
    if certificate.not_valid_before_utc > now:
        raise TemporalConfigError(
            f"the client certificate TEMPORAL_TLS_CLIENT_CERT_PATH names is valid only from "
            f"{certificate.not_valid_before_utc:%Y-%m-%d %H:%M} UTC: check this host's clock"
        )
