"""An upstream REST catalog, configured the PyIceberg way (`type: rest`, `uri`, `warehouse`,
SigV4 or a bearer token): where the front door sends a call and how it signs it as itself."""

from __future__ import annotations

from dataclasses import dataclass, field
from urllib.parse import parse_qsl, urlsplit

from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

# SHA-256 of an empty body: signed explicitly, as PyIceberg's SigV4 adapter does.
EMPTY_BODY_SHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"


class UpstreamConfigError(ValueError):
    """A front-door catalog that is not a REST catalog, or has no uri: fix its PyIceberg config."""


@dataclass(frozen=True)
class SigV4Signer:
    access_key: str
    secret_key: str = field(repr=False)
    session_token: str | None = field(default=None, repr=False)
    service: str = "execute-api"
    region: str = "us-east-1"

    def headers(self, method: str, url: str, headers: dict[str, str], body: bytes) -> dict[str, str]:
        """`headers` with the signature added (the front door's own identity, never the caller's)."""
        unsigned = {**headers}
        if not body:
            unsigned["x-amz-content-sha256"] = EMPTY_BODY_SHA256
        parts = urlsplit(url)
        request = AWSRequest(
            method=method,
            url=f"{parts.scheme}://{parts.netloc}{parts.path}",
            params=dict(parse_qsl(parts.query)),
            data=body,
            headers=unsigned,
        )
        credentials = Credentials(self.access_key, self.secret_key, self.session_token)
        SigV4Auth(credentials, self.service, self.region).add_auth(request)
        return dict(request.headers)


@dataclass(frozen=True)
class Upstream:
    catalog: str
    uri: str
    warehouse: str | None
    signer: SigV4Signer | None = None
    token: str | None = field(default=None, repr=False)

    @classmethod
    def of(cls, catalog: str, properties: dict[str, str]) -> Upstream:
        if properties.get("type", "rest") != "rest" or not properties.get("uri"):
            raise UpstreamConfigError(
                f"catalog {catalog!r} is not a REST catalog with a uri: "
                "the front door serves REST catalogs only"
            )
        signer = None
        if properties.get("rest.sigv4-enabled", "false").lower() == "true":
            access = properties.get("client.access-key-id") or properties.get("s3.access-key-id")
            secret = properties.get("client.secret-access-key") or properties.get("s3.secret-access-key")
            if not access or not secret:
                raise UpstreamConfigError(f"catalog {catalog!r} signs with SigV4 but names no credentials")
            signer = SigV4Signer(
                access_key=access,
                secret_key=secret,
                session_token=properties.get("client.session-token"),
                service=properties.get("rest.signing-name", "execute-api"),
                region=properties.get("rest.signing-region") or properties.get("client.region", "us-east-1"),
            )
        return cls(
            catalog=catalog,
            uri=properties["uri"].rstrip("/"),
            warehouse=properties.get("warehouse"),
            signer=signer,
            token=properties.get("token"),
        )

    def url(self, path: str, query: str) -> str:
        return f"{self.uri}/{path.lstrip('/')}" + (f"?{query}" if query else "")

    def authorized(self, method: str, url: str, headers: dict[str, str], body: bytes) -> dict[str, str]:
        """The headers a call goes upstream with, authorized as the front door."""
        if self.signer is not None:
            return self.signer.headers(method, url, headers, body)
        if self.token:
            return {**headers, "Authorization": f"Bearer {self.token}"}
        return headers
