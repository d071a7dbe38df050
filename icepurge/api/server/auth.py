"""Bearer tokens for the HTTP API: a config file of token hashes, each with the catalogs and
roles it may use. Static hashes, not JWT: no key distribution or clock skew to manage, and a
leaked config file reveals no token. The file:

    {"tokens": [{"name": "catalog-a", "sha256": "<hex of the token's SHA-256>",
                 "catalogs": ["a"], "roles": ["start", "read", "cancel"]}]}

`"catalogs": ["*"]` allows every catalog. Make a token with `icepurge api token`.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import secrets
import threading
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from icepurge.contract.roles import Role
from icepurge.contract.strict_model import FrozenModel, StrictModel

log = logging.getLogger(__name__)

ANY_CATALOG = "*"


class TokenEntry(FrozenModel):
    name: str = Field(min_length=1, description="Who holds the token; shown in logs, never the token.")
    sha256: str = Field(pattern="^[0-9a-f]{64}$")
    catalogs: frozenset[str] = Field(min_length=1)
    roles: frozenset[Role] = Field(min_length=1)


class TokenFile(StrictModel):
    tokens: list[TokenEntry]


class Principal(BaseModel):
    model_config = ConfigDict(frozen=True)

    name: str
    catalogs: frozenset[str]
    roles: frozenset[Role]

    @property
    def every_catalog(self) -> bool:
        return ANY_CATALOG in self.catalogs

    def may(self, role: Role, catalog: str | None) -> bool:
        return role in self.roles and (self.every_catalog or catalog in self.catalogs)

    def visible_catalogs(self) -> frozenset[str] | None:
        """The catalogs this principal may list, or None for all of them."""
        return None if self.every_catalog else self.catalogs


INSECURE_DEV = Principal(name="insecure-dev", catalogs=frozenset({ANY_CATALOG}), roles=frozenset(Role))


class IgnoredTokenNotice:
    """Insecure dev mode takes every request without looking at its token: the first request that
    brings one is told, in the log, once per process (a caller who set a token expects it to
    count)."""

    def __init__(self) -> None:
        self._said = threading.Event()

    def token_presented(self) -> None:
        if self._said.is_set():
            return
        self._said.set()
        log.warning(
            "a request brought a token, which INSECURE DEV MODE does not check (it accepts every "
            "request without one); set ICEPURGE_API_AUTH_FILE to have tokens checked"
        )


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def new_token() -> tuple[str, str]:
    """A fresh token and the hash that goes into the token file."""
    token = secrets.token_urlsafe(32)
    return token, token_hash(token)


class TokenVerifier:
    def __init__(self, entries: list[TokenEntry]) -> None:
        self._entries = entries

    @classmethod
    def from_file(cls, path: Path) -> TokenVerifier:
        return cls(TokenFile.model_validate_json(path.read_text()).tokens)

    def verify(self, token: str) -> Principal | None:
        digest = token_hash(token)
        found = None
        # Every entry is compared, in constant time, so timing tells nothing about the hashes.
        for entry in self._entries:
            if hmac.compare_digest(entry.sha256, digest):
                found = entry
        if found is None:
            return None
        return Principal(name=found.name, catalogs=found.catalogs, roles=found.roles)
