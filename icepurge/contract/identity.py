"""Who asked to purge what: the request's identity, carried unchanged from a request to its
status, its report and its events (a table purge's table and metadata file are the table's own)."""

from __future__ import annotations

from typing import Any, Protocol

from pydantic import BaseModel


class Identified(Protocol):
    @property
    def catalog(self) -> str: ...

    @property
    def namespace(self) -> list[str]: ...

    @property
    def requested_by(self) -> str: ...

    @property
    def request_id(self) -> str | None: ...


class RequestIdentity(BaseModel):
    """The fields a status and an event share with the request they come from."""

    catalog: str
    namespace: list[str]
    requested_by: str
    request_id: str | None = None


def identity_of(source: Identified) -> dict[str, Any]:
    """The identity fields of a request, a status or an event, for the next model built from it."""
    return {name: getattr(source, name) for name in RequestIdentity.model_fields}
