"""`icepurge purge report ID`: a purge's report object, a page at a time or whole."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Annotated

import typer

from icepurge.api.cli.common import cli_client, console, run_or_exit
from icepurge.api.cli.groups import purge
from icepurge.api.clients.errors import PurgeNotFoundError, PurgeReportUnavailableError

if TYPE_CHECKING:
    from icepurge.api.clients.protocol import Purges
    from icepurge.contract.report_pages import ReportPage
from icepurge.contract.report_sections import ReportSection


async def _page(
    client: Purges, purge_id: str, section: ReportSection | None, offset: int, limit: int
) -> ReportPage:
    from icepurge.api.clients.http_client import HttpPurgeClient

    if isinstance(client, HttpPurgeClient):
        return await client.report(purge_id, section, offset, limit)
    from icepurge.api.server.report_pages import ReportReader
    from icepurge.api.server.settings import ApiSettings
    from icepurge.contract.report_pages import default_section

    # Direct to Temporal: the report is read from the state location, as the API would.
    status = await client.status(purge_id)
    settings = ApiSettings()
    reader = ReportReader(settings.state_location, settings.state_io_properties)
    return await reader.page(status, section or default_section(status), offset, limit)


@purge.command("report")
def report(
    purge_id: str,
    *,
    section: Annotated[
        ReportSection | None,
        typer.Option(help="Default: would_delete for a dry run, failures otherwise."),
    ] = None,
    offset: Annotated[int, typer.Option(min=0, help="Entries to skip: the 'more:' line's offset.")] = 0,
    limit: Annotated[int, typer.Option(min=1, max=10_000, help="Entries per page.")] = 1000,
    every: Annotated[
        bool, typer.Option("--all", help="Every entry from offset on, page after page.")
    ] = False,
) -> None:
    """Print a purge's report entries, one per line: path, category and error (tab-separated)."""

    async def go() -> int | None:
        client = await cli_client()
        following: int | None = offset
        first = True
        while following is not None:
            page = await _page(client, purge_id, section, following, limit)
            if first:
                console().print(
                    f"{page.purge_id} {page.state}: {page.section.value} from {page.report_location}"
                )
                first = False
            for entry in page.entries:
                # Fields left empty at the end of a line are left out with their tabs.
                fields = "\t".join((entry.path, entry.category or "", entry.detail or ""))
                sys.stdout.write(fields.rstrip("\t") + "\n")
            following = page.next_offset
            if not every:
                break
        return following

    following = run_or_exit(go(), PurgeNotFoundError, PurgeReportUnavailableError)
    if following is not None:
        console().print(f"more: --offset {following} (or --all)")
