"""Namespace and whole-catalog purges over HTTP: start one (role drop), read its aggregate
status, page through the table purges it started."""

from __future__ import annotations

import logging
from typing import Annotated

from fastapi import APIRouter, Query, Request, Response
from pydantic import ConfigDict, Field

from icepurge.api.clients.listing import PurgePage
from icepurge.api.clients.temporal_namespace_client import namespace_request
from icepurge.api.server.catalog_checks import known_catalog
from icepurge.api.server.dependencies import Caller, Purges, forbidden
from icepurge.api.server.namespace_table_pages import NamespaceTablePages
from icepurge.api.server.purge_access import StartedPurge, authorize, started
from icepurge.api.server.report_pages import ReportReader
from icepurge.api.server.routes.reports import OffsetParameters
from icepurge.contract.batch_steps import MAX_BATCH_TABLES
from icepurge.contract.namespace_request import (
    DEFAULT_RANGE_TABLES,
    DEFAULT_WINDOW,
    MAX_RANGE_TABLES,
    MAX_WINDOW,
)
from icepurge.contract.namespace_status import NamespacePurgeStatus, SkippedPage
from icepurge.contract.request import PurgeOptions
from icepurge.contract.roles import Role
from icepurge.contract.started import StartOutcome
from icepurge.contract.strict_model import FrozenModel, StrictModel
from icepurge.contract.table_selection import TableSelection
from icepurge.contract.validation import InvalidPurgeRequestError

log = logging.getLogger(__name__)
router = APIRouter(prefix="/v1", tags=["namespace purges"])


class NamespacePurgeBody(FrozenModel):
    """Drop and purge every table of a namespace; [] is the whole catalog (needs confirm)."""

    model_config = ConfigDict(str_strip_whitespace=True)

    namespace: list[str] = Field(description="Namespace levels, outermost first; [] = the whole catalog.")
    recursive: bool = False
    confirm: str | None = Field(None, max_length=255, description="The catalog's name, for [].")
    max_concurrent_tables: int = Field(
        DEFAULT_WINDOW,
        ge=1,
        le=MAX_WINDOW,
        description="Work units at once (a batch of small tables counts once); at most the "
        "service's ICEPURGE_MAX_CONCURRENT_UNITS.",
    )
    batch_tables: int | None = Field(
        None,
        ge=0,
        le=MAX_BATCH_TABLES,
        description=f"Small tables purged together in one activity (unset: {MAX_BATCH_TABLES} wherever "
        "the options allow; 0: one workflow each).",
    )
    range_tables: int | None = Field(
        None,
        ge=1,
        le=MAX_RANGE_TABLES,
        description=f"Tables each child range workflow takes (unset: {DEFAULT_RANGE_TABLES:,}); a purge "
        "of fewer stays one workflow.",
    )
    options: PurgeOptions = Field(default_factory=PurgeOptions, description="Applied to every table.")
    selection: TableSelection | None = Field(
        None, description="Only the tables that match; the others stay, listed with the reason."
    )
    requested_by: str | None = Field(
        None, min_length=1, max_length=255, description="Default: the token's name."
    )
    request_id: str | None = Field(None, max_length=255)
    notify_workflow_id: str | None = Field(None, min_length=1, max_length=1000)
    tenant: str | None = Field(
        None, min_length=1, max_length=255, description="Fairness key (default: the catalog)."
    )


class TablePageParameters(StrictModel):
    page_size: int = Field(50, ge=1, le=1000)
    page_token: str | None = Field(None, max_length=4096)


@router.post("/catalogs/{catalog}/namespace-purges", status_code=202, response_model=StartedPurge)
async def purge_namespace(
    catalog: str,
    body: NamespacePurgeBody,
    *,
    caller: Caller,
    client: Purges,
    request: Request,
    response: Response,
) -> StartedPurge:
    """Enumerates the namespace (nested ones too when recursive), purges each table by name as
    a child purge, drops the namespaces left empty."""
    if not caller.may(Role.DROP, catalog):
        raise forbidden(caller, Role.DROP, catalog)
    known_catalog(request, caller, catalog)
    limit = request.app.state.settings.max_concurrent_units
    if body.max_concurrent_tables > limit:
        raise InvalidPurgeRequestError(
            f"max_concurrent_tables {body.max_concurrent_tables} is over this service's limit of {limit} "
            "work units at once (ICEPURGE_MAX_CONCURRENT_UNITS): ask for at most that, or raise the setting"
        )
    parsed = namespace_request(
        catalog,
        body.namespace,
        requested_by=body.requested_by or caller.name,
        recursive=body.recursive,
        max_concurrent_tables=body.max_concurrent_tables,
        batch_tables=body.batch_tables,
        range_tables=body.range_tables,
        confirm=body.confirm,
        options=body.options,
        request_id=body.request_id,
        notify_workflow_id=body.notify_workflow_id,
        tenant=body.tenant,
        selection=body.selection,
    )
    purge_id = await client.namespaces.start(parsed)
    log.info("namespace purge %s (%s) started by %s", purge_id, parsed.name, caller.name)
    return started(StartOutcome(purge_id=purge_id), request, response, "namespace-purges")


@router.get("/namespace-purges/{purge_id}", response_model=NamespacePurgeStatus)
async def namespace_purge_status(purge_id: str, caller: Caller, client: Purges) -> NamespacePurgeStatus:
    """Tables and files across the table purges, live; cancel it at /v1/purges/{id}/cancel."""
    await authorize(client, caller, Role.READ, purge_id)
    return await client.namespaces.status(purge_id)


@router.get("/purges/{purge_id}/tables", response_model=PurgePage)
async def namespace_purge_tables(
    purge_id: str,
    parameters: Annotated[TablePageParameters, Query()],
    caller: Caller,
    client: Purges,
    request: Request,
) -> PurgePage:
    """The table purges a namespace purge started, newest first, a page at a time; then the
    tables its batches purged (no workflow of their own), by their records."""
    await authorize(client, caller, Role.READ, purge_id)
    pages = NamespaceTablePages(client, request.app.state.reports, purge_id, caller.visible_catalogs())
    return await pages.page(parameters.page_size, parameters.page_token)


@router.get("/namespace-purges/{purge_id}/skipped", response_model=SkippedPage, responses={404: {}})
async def namespace_purge_skipped(
    purge_id: str,
    parameters: Annotated[OffsetParameters, Query()],
    caller: Caller,
    client: Purges,
    request: Request,
) -> SkippedPage:
    """Every entry the enumeration left alone, with why: tables its selection didn't select (or
    listed and not found), protected namespaces, views and other engines' entries. With a dry run
    and `purge tables`, exactly what the real purge would purge and what it would leave."""
    await authorize(client, caller, Role.READ, purge_id)
    status = await client.namespaces.status(purge_id)
    reader: ReportReader = request.app.state.reports
    return await reader.skipped(status, parameters.offset, parameters.limit)
