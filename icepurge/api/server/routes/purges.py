"""Table purges: start one from a dropped table's snapshot, list, read, cancel, re-run."""

from __future__ import annotations

import logging
from typing import Annotated

from fastapi import APIRouter, Query, Request, Response
from pydantic import BaseModel, Field, ValidationError

from icepurge.api.clients.listing import PurgeFilter, PurgePage
from icepurge.api.server.catalog_checks import admitted_catalog, known_catalog
from icepurge.api.server.dependencies import Caller, Purges, forbidden
from icepurge.api.server.purge_access import StartedPurge, authorize, readable_status, started
from icepurge.contract.kinds import PurgeKind
from icepurge.contract.request import PurgeRequest
from icepurge.contract.roles import Role
from icepurge.contract.started import StartOutcome
from icepurge.contract.states import PurgeState
from icepurge.contract.status import PurgeStatus
from icepurge.contract.strict_model import StrictModel
from icepurge.contract.validation import InvalidPurgeRequestError

log = logging.getLogger(__name__)
router = APIRouter(prefix="/v1", tags=["purges"])


class CancelRequested(BaseModel):
    purge_id: str
    cancel_requested: bool = True


class RerunRequest(StrictModel):
    file_io_properties: dict[str, str] | None = Field(
        None, description="New FileIO properties (credentials fixed since); default: the last run's."
    )


class ListParameters(StrictModel):
    kind: PurgeKind | None = Field(None, description="table or namespace purges only; both when unset.")
    state: PurgeState | None = None
    catalog: str | None = None
    namespace: str | None = Field(
        None, description="Levels joined by 0x1F (%1F in URLs), as in Iceberg REST."
    )
    table: str | None = None
    requested_by: str | None = None
    page_size: int = Field(50, ge=1, le=1000)
    page_token: str | None = Field(None, max_length=4096)

    def purge_filter(self) -> PurgeFilter:
        try:
            return PurgeFilter(
                kind=self.kind,
                state=self.state,
                catalog=self.catalog,
                namespace=self.namespace.split("\x1f") if self.namespace else None,
                table=self.table,
                requested_by=self.requested_by,
            )
        except ValidationError as error:
            raise InvalidPurgeRequestError(f"invalid filter: {error.errors()[0]['msg']}") from None


@router.post("/purges", status_code=202, response_model=StartedPurge)
async def start_purge(
    body: PurgeRequest, caller: Caller, client: Purges, request: Request, response: Response
) -> StartedPurge:
    """Starts a purge of a dropped table's snapshot, or returns the one already started for it.
    404 for a catalog neither configured nor declared snapshot-only; 422 without a metadata
    location (a purge by name drops the table: `POST /v1/catalogs/{catalog}/purges`, role drop)."""
    if not caller.may(Role.START, body.catalog):
        raise forbidden(caller, Role.START, body.catalog)
    if body.by_name:
        known_catalog(request, caller, body.catalog)
        raise InvalidPurgeRequestError(
            "metadata_location is missing: POST /v1/purges takes a dropped table's snapshot; to "
            f"drop and purge {body.table_name} by name, use POST /v1/catalogs/{body.catalog}/purges "
            "(role drop)"
        )
    admitted_catalog(request, caller, body.catalog)
    outcome = await client.begin(body)
    log.info("purge %s of %s started by %s", outcome.purge_id, body.table_name, caller.name)
    return started(outcome, request, response)


@router.get("/purges/{purge_id}", response_model=PurgeStatus)
async def purge_status(purge_id: str, caller: Caller, client: Purges, request: Request) -> PurgeStatus:
    return await readable_status(purge_id, caller, client, request)


@router.post("/purges/{purge_id}/cancel", status_code=202, response_model=CancelRequested)
async def cancel_purge(purge_id: str, caller: Caller, client: Purges) -> CancelRequested:
    """Asks the purge to stop its running chunks; it ends CANCELLED. 409 once it has finished."""
    await authorize(client, caller, Role.CANCEL, purge_id)
    await client.cancel(purge_id)
    log.info("purge %s cancelled by %s", purge_id, caller.name)
    return CancelRequested(purge_id=purge_id)


@router.post("/purges/{purge_id}/rerun", status_code=202, response_model=StartedPurge)
async def rerun_purge(
    purge_id: str,
    *,
    caller: Caller,
    client: Purges,
    request: Request,
    response: Response,
    body: RerunRequest | None = None,
) -> StartedPurge:
    """Runs a closed purge again (to finish one that failed or ended with errors); 409 while it
    runs and once it SUCCEEDED."""
    await authorize(client, caller, Role.START, purge_id)
    await client.rerun(purge_id, body.file_io_properties if body else None)
    log.info("purge %s re-run by %s", purge_id, caller.name)
    return started(StartOutcome(purge_id=purge_id), request, response)


@router.get("/purges", response_model=PurgePage)
async def list_purges(
    parameters: Annotated[ListParameters, Query()], caller: Caller, client: Purges
) -> PurgePage:
    """Newest first; only the catalogs the token may read."""
    catalog = parameters.catalog
    if Role.READ not in caller.roles or (catalog is not None and not caller.may(Role.READ, catalog)):
        raise forbidden(caller, Role.READ, catalog)
    return await client.list(
        parameters.purge_filter(), parameters.page_size, parameters.page_token, caller.visible_catalogs()
    )
