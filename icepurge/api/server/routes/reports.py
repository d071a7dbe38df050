"""A purge's report over HTTP: failures with their errors, a dry run's would-delete list, the
skipped foreign files, the unreadable metadata, a page at a time."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Request
from pydantic import Field

from icepurge.api.server.dependencies import Caller, Purges
from icepurge.api.server.purge_access import readable_status
from icepurge.api.server.report_pages import ReportReader
from icepurge.contract.report_pages import ReportPage, default_section
from icepurge.contract.report_sections import ReportSection
from icepurge.contract.strict_model import StrictModel

router = APIRouter(prefix="/v1", tags=["reports"])


class OffsetParameters(StrictModel):
    """A page of a list read from the state location: a report's, a namespace purge's skipped entries."""

    offset: int = Field(0, ge=0, description="Entries to skip: the previous page's next_offset.")
    limit: int = Field(1000, ge=1, le=10_000)


class ReportParameters(OffsetParameters):
    section: ReportSection | None = Field(
        None, description="Default: would_delete for a dry run, failures otherwise."
    )


@router.get("/purges/{purge_id}/report", response_model=ReportPage, responses={404: {}})
async def purge_report(
    purge_id: str,
    parameters: Annotated[ReportParameters, Query()],
    caller: Caller,
    client: Purges,
    request: Request,
) -> ReportPage:
    """One page of the report object; 404 with the reason while the purge has none."""
    status = await readable_status(purge_id, caller, client, request)
    reader: ReportReader = request.app.state.reports
    section = parameters.section or default_section(status)
    return await reader.page(status, section, parameters.offset, parameters.limit)
