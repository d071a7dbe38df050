"""What each route needs, from the app's state: the caller (authenticated) and a Temporal client."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Header, HTTPException, Request

from icepurge.api.clients.temporal_client import PurgeClient
from icepurge.api.server.auth import INSECURE_DEV, IgnoredTokenNotice, Principal, TokenVerifier
from icepurge.api.server.settings import ApiSettings
from icepurge.api.server.temporal_connection import TemporalConnection
from icepurge.contract.roles import Role


def unauthorized(detail: str) -> HTTPException:
    return HTTPException(401, detail, headers={"WWW-Authenticate": "Bearer"})


def forbidden(principal: Principal, role: Role, catalog: str | None) -> HTTPException:
    where = f"catalog {catalog!r}" if catalog else "any catalog"
    return HTTPException(403, f"token {principal.name!r} may not {role.value} purges of {where}")


def principal(request: Request, authorization: Annotated[str | None, Header()] = None) -> Principal:
    settings: ApiSettings = request.app.state.settings
    verifier: TokenVerifier | None = request.app.state.verifier
    if settings.api_insecure_dev:
        if authorization:
            notice: IgnoredTokenNotice = request.app.state.ignored_token_notice
            notice.token_presented()
        return INSECURE_DEV
    if verifier is None:
        raise unauthorized(
            "authentication is not configured: set ICEPURGE_API_AUTH_FILE "
            "(or ICEPURGE_API_INSECURE_DEV=true, for development only)"
        )
    scheme, _, token = (authorization or "").partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise unauthorized("send 'Authorization: Bearer <token>'")
    found = verifier.verify(token.strip())
    if found is None:
        raise unauthorized("unknown token")
    return found


async def purges(request: Request) -> PurgeClient:
    temporal: TemporalConnection = request.app.state.temporal
    return await temporal.purges()


Caller = Annotated[Principal, Depends(principal)]
Purges = Annotated[PurgeClient, Depends(purges)]
