"""Who asked to purge what: a request's identity, carried unchanged from the request to its status
and from a status to its events. Each of those models declares the identity's fields in its own
place (their JSON and schemas read as they always have: a status starts with its purge id and
state); `RequestIdentity` is the one definition of what the identity is, and `identity_of` carries
it as one value, so a new identity field is added here and in each model's declaration (a contract
test holds them to it), never copied field by field."""

from __future__ import annotations

from typing import Any, Protocol

from icepurge.contract.strict_model import StrictModel


class Identified(Protocol):
    @property
    def catalog(self) -> str: ...

    @property
    def namespace(self) -> list[str]: ...

    @property
    def requested_by(self) -> str: ...

    @property
    def request_id(self) -> str | None: ...


class RequestIdentity(StrictModel):
    catalog: str
    namespace: list[str]
    requested_by: str
    request_id: str | None = None


def identity_of(source: Identified) -> dict[str, Any]:
    """The identity of a request, a status or an event, as the next model's fields."""
    return RequestIdentity.model_validate(source, from_attributes=True).model_dump()
