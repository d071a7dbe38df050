"""Certificates for a TLS test endpoint, made on the spot: a CA, a server certificate for
127.0.0.1 and localhost, a client certificate it signed, an expired one, and a second CA that
signed none of them (the wrong CA a client may be given)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from ipaddress import IPv4Address
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

_DAY = timedelta(days=1)


@dataclass(frozen=True)
class KeyPair:
    cert: Path
    key: Path


@dataclass(frozen=True)
class TlsFiles:
    ca: Path
    other_ca: Path
    server: KeyPair
    client: KeyPair
    expired_client: KeyPair


def _name(common_name: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


def _write(directory: Path, stem: str, cert: x509.Certificate, key: ec.EllipticCurvePrivateKey) -> KeyPair:
    pair = KeyPair(directory / f"{stem}.pem", directory / f"{stem}.key")
    pair.cert.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    pair.key.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
    )
    return pair


@dataclass(frozen=True)
class _Authority:
    name: x509.Name
    key: ec.EllipticCurvePrivateKey
    cert: x509.Certificate

    @classmethod
    def make(cls, common_name: str) -> _Authority:
        key = ec.generate_private_key(ec.SECP256R1())
        now = datetime.now(UTC)
        cert = (
            x509.CertificateBuilder()
            .subject_name(_name(common_name))
            .issuer_name(_name(common_name))
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - _DAY)
            .not_valid_after(now + 30 * _DAY)
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .add_extension(
                x509.KeyUsage(False, False, False, False, False, True, True, False, False), critical=True
            )
            .sign(key, hashes.SHA256())
        )
        return cls(_name(common_name), key, cert)

    def issue(
        self, common_name: str, server: bool, valid_until: datetime
    ) -> tuple[x509.Certificate, ec.EllipticCurvePrivateKey]:
        key = ec.generate_private_key(ec.SECP256R1())
        usage = ExtendedKeyUsageOID.SERVER_AUTH if server else ExtendedKeyUsageOID.CLIENT_AUTH
        builder = (
            x509.CertificateBuilder()
            .subject_name(_name(common_name))
            .issuer_name(self.name)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(valid_until - 60 * _DAY)
            .not_valid_after(valid_until)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(x509.ExtendedKeyUsage([usage]), critical=False)
        )
        if server:
            names = [x509.DNSName("localhost"), x509.IPAddress(IPv4Address("127.0.0.1"))]
            builder = builder.add_extension(x509.SubjectAlternativeName(names), critical=False)
        return builder.sign(self.key, hashes.SHA256()), key


def make_tls_files(directory: Path) -> TlsFiles:
    directory.mkdir(parents=True, exist_ok=True)
    ca, other = _Authority.make("icepurge test CA"), _Authority.make("some other CA")
    now = datetime.now(UTC)
    (directory / "ca.pem").write_bytes(ca.cert.public_bytes(serialization.Encoding.PEM))
    (directory / "other-ca.pem").write_bytes(other.cert.public_bytes(serialization.Encoding.PEM))
    return TlsFiles(
        ca=directory / "ca.pem",
        other_ca=directory / "other-ca.pem",
        server=_write(directory, "server", *ca.issue("127.0.0.1", True, now + 30 * _DAY)),
        client=_write(directory, "client", *ca.issue("icepurge worker", False, now + 30 * _DAY)),
        expired_client=_write(directory, "expired-client", *ca.issue("icepurge worker", False, now - _DAY)),
    )
