"""Who may touch a purge, and what a start answers: authorization happens before any workflow is
touched, the role from the token and the catalog from the purge's search attributes."""

from __future__ import annotations

import re

from fastapi import Request, Response
from pydantic import BaseModel, Field

from icepurge.api.clients.errors import PurgeNotFoundError
from icepurge.api.clients.temporal_client import PurgeClient
from icepurge.api.server.auth import Principal
from icepurge.api.server.dependencies import forbidden
from icepurge.api.server.report_pages import ReportReader
from icepurge.api.server.settings import ApiSettings
from icepurge.contract.roles import Role
from icepurge.contract.started import CLOSED_DESCRIPTION, StartOutcome
from icepurge.contract.status import PurgeStatus

_PURGE_ID = re.compile(r"[A-Za-z0-9._-]{1,200}")


class StartedPurge(BaseModel):
    purge_id: str
    status_url: str
    closed: str | None = Field(None, description=CLOSED_DESCRIPTION)


async def authorize(client: PurgeClient, caller: Principal, role: Role, purge_id: str) -> None:
    if not _PURGE_ID.fullmatch(purge_id):
        raise PurgeNotFoundError(f"no purge with id {purge_id!r}")
    if role not in caller.roles:
        raise forbidden(caller, role, None)
    catalog = await client.catalog_of(purge_id)
    if not caller.may(role, catalog):
        raise forbidden(caller, role, catalog)


def started(
    outcome: StartOutcome, request: Request, response: Response, collection: str = "purges"
) -> StartedPurge:
    settings: ApiSettings = request.app.state.settings
    base = settings.api_public_url or str(request.base_url).rstrip("/")
    url = f"{base}/v1/{collection}/{outcome.purge_id}"
    response.headers["Location"] = url
    return StartedPurge(purge_id=outcome.purge_id, status_url=url, closed=outcome.closed)


async def readable_status(
    purge_id: str, caller: Principal, client: PurgeClient, request: Request
) -> PurgeStatus:
    """A purge's status for a caller who may read it. A table a namespace purge purged in a batch
    has no workflow: its record answers for it."""
    try:
        await authorize(client, caller, Role.READ, purge_id)
    except PurgeNotFoundError:
        reader: ReportReader = request.app.state.reports
        record = await reader.table_record(purge_id) if _PURGE_ID.fullmatch(purge_id) else None
        if record is None:
            raise
        if not caller.may(Role.READ, record.status.catalog):
            raise forbidden(caller, Role.READ, record.status.catalog) from None
        return record.status
    return await client.status(purge_id)
