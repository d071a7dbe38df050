"""Catalogs: which catalogs this API knows, and drop-and-purge by name. Names only:
a catalog's properties (credentials among them) never leave the process."""

from __future__ import annotations

import logging

from fastapi import APIRouter, Request, Response
from pydantic import BaseModel

from icepurge.api.server.catalog_checks import known_catalog, usable_catalogs
from icepurge.api.server.dependencies import Caller, Purges, forbidden
from icepurge.api.server.purge_access import StartedPurge, started
from icepurge.contract.catalog_request import CatalogPurgeRequest
from icepurge.contract.roles import Role
from icepurge.contract.validation import by_name_request

log = logging.getLogger(__name__)
router = APIRouter(prefix="/v1", tags=["catalogs"])


class CatalogName(BaseModel):
    name: str


class CatalogList(BaseModel):
    catalogs: list[CatalogName]


@router.get("/catalogs", response_model=CatalogList)
async def list_catalogs(caller: Caller, request: Request) -> CatalogList:
    """The catalogs configured on this API (PyIceberg configuration) that the token may use."""
    return CatalogList(catalogs=[CatalogName(name=name) for name in usable_catalogs(request, caller)])


@router.post("/catalogs/{catalog}/purges", status_code=202, response_model=StartedPurge)
async def purge_by_name(
    catalog: str,
    body: CatalogPurgeRequest,
    *,
    caller: Caller,
    client: Purges,
    request: Request,
    response: Response,
) -> StartedPurge:
    """Drops the table from the catalog (no purge) once its plan is recorded, then deletes its
    files; with options.purge_after_seconds, waits SCHEDULED first (undrop, expedite)."""
    if not caller.may(Role.DROP, catalog):
        raise forbidden(caller, Role.DROP, catalog)
    known_catalog(request, caller, catalog)
    purge_request = by_name_request(
        catalog,
        body.namespace,
        body.table,
        requested_by=body.requested_by or caller.name,
        options=body.options,
        request_id=body.request_id,
        notify_workflow_id=body.notify_workflow_id,
    )
    outcome = await client.begin(purge_request)
    log.info("purge by name %s (%s) started by %s", outcome.purge_id, purge_request.table_name, caller.name)
    return started(outcome, request, response)
