"""Passes a call to the upstream catalog and its answer back unchanged: status, body and the
headers that matter. Only the hop's own headers (and, in service mode, the caller's
Authorization: the front door authorizes as itself) stay behind."""

from __future__ import annotations

from dataclasses import dataclass, field

import httpx

from icepurge.api.server.front_door.upstream import Upstream

# RFC 9110 hop-by-hop headers, and those the HTTP client sets again for the next hop.
_HOP_BY_HOP = frozenset(
    {
        "connection",
        "keep-alive",
        "proxy-authenticate",
        "proxy-authorization",
        "te",
        "trailer",
        "transfer-encoding",
        "upgrade",
        "host",
        "content-length",
        "accept-encoding",
    }
)
# In service mode the front door authorizes upstream as itself: the caller's credential stays here.
_NOT_FORWARDED_AS_SERVICE = _HOP_BY_HOP | {"authorization"}
# The body comes back decoded: its length and encoding are the front door's own.
_NOT_RETURNED = frozenset(
    {"connection", "keep-alive", "transfer-encoding", "content-length", "content-encoding"}
)


@dataclass(frozen=True)
class Call:
    """A REST catalog call: `path` as the client encoded it, after the catalog's base."""

    method: str
    path: str
    query: str = ""
    headers: dict[str, str] = field(default_factory=dict, repr=False)
    body: bytes = field(default=b"", repr=False)


@dataclass(frozen=True)
class Forwarded:
    status: int
    body: bytes
    headers: dict[str, str]


async def forward(
    client: httpx.AsyncClient, upstream: Upstream, call: Call, *, as_caller: bool = False
) -> Forwarded:
    """`as_caller`: with the caller's own credentials (pass-through), else as the front door.
    Raises httpx.HTTPError when the upstream can't be reached."""
    url = upstream.url(call.path, call.query)
    kept_back = _HOP_BY_HOP if as_caller else _NOT_FORWARDED_AS_SERVICE
    outgoing = {name: value for name, value in call.headers.items() if name.lower() not in kept_back}
    headers = outgoing if as_caller else upstream.authorized(call.method, url, outgoing, call.body)
    answer = await client.request(call.method, url, headers=headers, content=call.body)
    returned = {name: value for name, value in answer.headers.items() if name.lower() not in _NOT_RETURNED}
    return Forwarded(answer.status_code, answer.content, returned)
