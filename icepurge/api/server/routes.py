"""The /v1 routes. Authorization happens before any workflow is touched: the role from the
token, and the catalog from the request body or the purge's search attributes."""

from __future__ import annotations

import logging
import re
from typing import Annotated

from fastapi import APIRouter, Query, Request, Response
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from icepurge.api.clients.errors import PurgeNotFoundError
from icepurge.api.clients.listing import PurgeFilter, PurgePage
from icepurge.api.clients.temporal_client import PurgeClient
from icepurge.api.server.auth import Principal
from icepurge.api.server.catalog_checks import admitted_catalog, known_catalog
from icepurge.api.server.dependencies import Caller, Purges, forbidden
from icepurge.api.server.report_pages import ReportReader
from icepurge.api.server.settings import ApiSettings
from icepurge.contract.controls import RateBudgetChange
from icepurge.contract.kinds import PurgeKind
from icepurge.contract.request import PurgeRequest
from icepurge.contract.roles import Role
from icepurge.contract.started import CLOSED_DESCRIPTION, StartOutcome
from icepurge.contract.states import PurgeState
from icepurge.contract.status import PurgeStatus
from icepurge.contract.validation import InvalidPurgeRequestError

log = logging.getLogger(__name__)
router = APIRouter(prefix="/v1")
_PURGE_ID = re.compile(r"[A-Za-z0-9._-]{1,200}")


class StartedPurge(BaseModel):
    purge_id: str
    status_url: str
    closed: str | None = Field(None, description=CLOSED_DESCRIPTION)


class CancelRequested(BaseModel):
    purge_id: str
    cancel_requested: bool = True


class RerunRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    file_io_properties: dict[str, str] | None = Field(
        None, description="New FileIO properties (credentials fixed since); default: the last run's."
    )


class ListParameters(BaseModel):
    model_config = ConfigDict(extra="forbid")

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


@router.get("/purges/{purge_id}", response_model=PurgeStatus)
async def purge_status(purge_id: str, caller: Caller, client: Purges, request: Request) -> PurgeStatus:
    return await readable_status(purge_id, caller, client, request)


@router.post("/purges/{purge_id}/cancel", status_code=202, response_model=CancelRequested)
async def cancel_purge(purge_id: str, caller: Caller, client: Purges) -> CancelRequested:
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


@router.post("/purges/{purge_id}/pause", response_model=PurgeStatus)
async def pause_purge(purge_id: str, caller: Caller, client: Purges) -> PurgeStatus:
    """Running chunks stop at their checkpoints; 409 when the purge can't pause now."""
    await authorize(client, caller, Role.CONTROL, purge_id)
    status = await client.pause(purge_id)
    log.info("purge %s paused by %s", purge_id, caller.name)
    return status


@router.post("/purges/{purge_id}/resume", response_model=PurgeStatus)
async def resume_purge(purge_id: str, caller: Caller, client: Purges) -> PurgeStatus:
    await authorize(client, caller, Role.CONTROL, purge_id)
    status = await client.resume(purge_id)
    log.info("purge %s resumed by %s", purge_id, caller.name)
    return status


@router.put("/purges/{purge_id}/rate-budget", response_model=PurgeStatus)
async def set_rate_budget(
    purge_id: str, body: RateBudgetChange, caller: Caller, client: Purges
) -> PurgeStatus:
    """In force within seconds: running chunks restart from their checkpoints on the new budget."""
    await authorize(client, caller, Role.CONTROL, purge_id)
    status = await client.set_rate_budget(purge_id, body.bucket_requests_per_second)
    log.info("purge %s budget set to %s by %s", purge_id, body.bucket_requests_per_second, caller.name)
    return status


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
