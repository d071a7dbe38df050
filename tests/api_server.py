"""Tokens for the HTTP API tests, and the server they run against."""

from __future__ import annotations

import json
from pathlib import Path

from icepurge.api.server.auth import TokenEntry, token_hash
from icepurge.contract.roles import Role

CATALOG_A, CATALOG_B = "api-a", "api-b"
# name: (token, catalogs, roles)
TOKENS: dict[str, tuple[str, set[str], set[Role]]] = {
    "admin": ("admin-token", {"*"}, set(Role)),
    "a-full": ("a-full-token", {CATALOG_A}, set(Role)),
    "a-reader": ("a-reader-token", {CATALOG_A}, {Role.READ}),
    "lake-starter": ("lake-starter-token", {"lake"}, {Role.START, Role.READ}),
    "lake-dropper": ("lake-dropper-token", {"lake"}, {Role.DROP, Role.READ}),
    "bucket-dropper": (
        "bucket-dropper-token",
        {"tablebucket", "rehearsal", "purgesall", "holding", "slowanswers", "slowholding"},
        {Role.DROP, Role.READ},
    ),
    "bucket-reader": ("bucket-reader-token", {"tablebucket"}, {Role.READ}),
}


def token_file(directory: Path) -> Path:
    path = directory / "tokens.json"
    entries = [
        TokenEntry(name=name, sha256=token_hash(token), catalogs=frozenset(catalogs), roles=frozenset(roles))
        for name, (token, catalogs, roles) in TOKENS.items()
    ]
    path.write_text(json.dumps({"tokens": [json.loads(entry.model_dump_json()) for entry in entries]}))
    return path


def bearer(name: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {TOKENS[name][0]}"}


def token_env(directory: Path) -> dict[str, str]:
    """The CLI's environment for the admin token, kept in a file as an operator keeps it."""
    path = directory / "token"
    path.write_text(TOKENS["admin"][0] + "\n")
    return {"ICEPURGE_API_TOKEN_FILE": str(path)}
