"""A purge report's lists, a page at a time: what `GET /v1/purges/{id}/report` and
`icepurge purge report` answer."""

from __future__ import annotations

from pydantic import Field

from icepurge.contract.report_sections import ReportSection
from icepurge.contract.status import PurgeStatus
from icepurge.contract.strict_model import StrictModel


class ReportEntry(StrictModel):
    path: str
    category: str | None = None
    detail: str | None = Field(None, description="A failure's error; an unreadable file's reason.")


class ReportPage(StrictModel):
    purge_id: str
    state: str
    report_location: str
    section: ReportSection
    entries: list[ReportEntry]
    next_offset: int | None = Field(None, description="Pass as offset for the next page; null at the end.")


def default_section(status: PurgeStatus) -> ReportSection:
    return ReportSection.WOULD_DELETE if status.dry_run else ReportSection.FAILURES
