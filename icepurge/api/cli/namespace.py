"""`icepurge purge namespace|tables` and the namespace side of `status` and `watch`."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Annotated, cast

import typer

from icepurge.api.cli.common import cli_client, console, namespace_levels, run_or_exit, say
from icepurge.api.cli.groups import purge
from icepurge.api.clients.errors import PurgeNotFoundError
from icepurge.contract.reasons import shortened

if TYPE_CHECKING:
    from icepurge.api.clients.listing import PurgePage
    from icepurge.contract.namespace_status import NamespacePurgeStatus, SkippedPage

# By the final state's name: the status models load only when a command runs.
NAMESPACE_EXIT_CODES = {"SUCCEEDED": 0, "SUCCEEDED_WITH_ERRORS": 3, "FAILED": 4, "CANCELLED": 5}


@purge.command("namespace")
def purge_namespace(
    catalog: Annotated[str, typer.Argument(help="A catalog configured on the workers.")],
    namespace: Annotated[
        str,
        typer.Argument(
            help="Levels joined by dots (a.b), a JSON list of levels, or '' for the whole catalog."
        ),
    ],
    *,
    recursive: Annotated[bool, typer.Option(help="Also every nested namespace.")] = False,
    max_concurrent_tables: Annotated[
        int | None,
        typer.Option(
            min=1, help="Work units at once (a batch counts once); default: the contract's default."
        ),
    ] = None,
    batch_tables: Annotated[
        int | None,
        typer.Option(
            min=0,
            max=32,
            help="Small tables purged together in one activity (default 32 where the options "
            "allow); 0: one workflow each.",
        ),
    ] = None,
    range_tables: Annotated[
        int | None,
        typer.Option(
            min=1,
            help="Tables each child range workflow takes (default 50,000); a purge of fewer stays "
            "one workflow.",
        ),
    ] = None,
    confirm: Annotated[str | None, typer.Option(help="The catalog's name: required for ''.")] = None,
    dry_run: Annotated[bool, typer.Option(help="Plan every table; drop and delete nothing.")] = False,
    purge_after: Annotated[int, typer.Option(help="Soft delete each table for this many seconds.")] = 0,
    request_id: Annotated[str | None, typer.Option(help="Makes a retried command idempotent.")] = None,
    requested_by: Annotated[str | None, typer.Option(help="Default: $USER.")] = None,
    tenant: Annotated[
        str | None,
        typer.Option(help="The fairness key its tasks share the workers under; default: the catalog."),
    ] = None,
    match: Annotated[
        list[str] | None,
        typer.Option(help="Only tables whose dotted name below the catalog matches this glob (repeatable)."),
    ] = None,
    exclude: Annotated[
        list[str] | None, typer.Option(help="Leave tables whose dotted name matches this glob (repeatable).")
    ] = None,
    table_property: Annotated[
        list[str] | None,
        typer.Option(
            "--property", help="Only tables with key=value, key (set) or !key (not set) (repeatable)."
        ),
    ] = None,
    older_than: Annotated[
        str | None, typer.Option(help="Only tables last committed longer ago than this (30d, 12h, 90m).")
    ] = None,
    table: Annotated[
        list[str] | None, typer.Option(help="Only this table, namespace.table (repeatable).")
    ] = None,
) -> None:
    """Drop and purge every table of a namespace (or a whole catalog), or those a selection
    matches; prints the purge id."""
    from icepurge.api.clients.temporal_namespace_client import namespace_request
    from icepurge.contract.validation import InvalidPurgeRequestError

    levels = namespace_levels(namespace) if namespace.strip() else []
    who = requested_by or os.environ.get("USER") or "icepurge-cli"
    try:
        request = namespace_request(
            catalog,
            levels,
            requested_by=who,
            recursive=recursive,
            max_concurrent_tables=max_concurrent_tables,
            batch_tables=batch_tables,
            range_tables=range_tables,
            confirm=confirm,
            options={"dry_run": dry_run, "purge_after_seconds": purge_after},
            request_id=request_id,
            tenant=tenant,
            selection=_selection(match, exclude, table_property, older_than, table),
        )
    except InvalidPurgeRequestError as error:
        console().print(f"[red]{error}[/red]")
        raise typer.Exit(2) from None

    async def go() -> str:
        return await (await cli_client()).namespaces.start(request)

    print(run_or_exit(go(), InvalidPurgeRequestError))


def _selection(
    match: list[str] | None,
    exclude: list[str] | None,
    conditions: list[str] | None,
    older_than: str | None,
    tables: list[str] | None,
) -> dict[str, object] | None:
    chosen: dict[str, object] = {
        "names": match or [],
        "exclude_names": exclude or [],
        "properties": conditions or [],
        "older_than": older_than,
        "tables": tables or [],
    }
    return chosen if any(chosen.values()) else None


def purge_tables(purge_id: str, limit: int, page_token: str | None) -> PurgePage:
    """The table purges a namespace purge started, newest first, then its batched tables."""
    from icepurge.contract.validation import InvalidPurgeRequestError

    async def go() -> PurgePage:
        from icepurge.api.clients.http_client import HttpPurgeClient

        client = await cli_client()
        if isinstance(client, HttpPurgeClient):
            return await client.namespace_tables(purge_id, page_size=limit, page_token=page_token)
        from icepurge.api.clients.temporal_client import PurgeClient
        from icepurge.api.server.namespace_table_pages import NamespaceTablePages
        from icepurge.api.server.report_pages import ReportReader
        from icepurge.api.server.settings import ApiSettings

        # Direct to Temporal: batched tables are read from the state location, as the API would.
        settings = ApiSettings()
        reader = ReportReader(settings.state_location, settings.state_io_properties)
        # Not over HTTP: cli_client gave Temporal's own client.
        temporal = cast(PurgeClient, client)
        return await NamespaceTablePages(temporal, reader, purge_id, None).page(limit, page_token)

    return run_or_exit(go(), PurgeNotFoundError, InvalidPurgeRequestError)


def skipped_entries(purge_id: str, offset: int, limit: int) -> SkippedPage:
    """What a namespace purge's enumeration left alone, over the API or read from the state
    location as the API would."""

    async def go() -> SkippedPage:
        from icepurge.api.clients.http_client import HttpPurgeClient

        client = await cli_client()
        if isinstance(client, HttpPurgeClient):
            return await client.namespaces.skipped(purge_id, offset, limit)
        from icepurge.api.server.report_pages import ReportReader
        from icepurge.api.server.settings import ApiSettings

        settings = ApiSettings()
        reader = ReportReader(settings.state_location, settings.state_io_properties)
        return await reader.skipped(await client.namespaces.status(purge_id), offset, limit)

    return run_or_exit(go(), PurgeNotFoundError)


def namespace_status(purge_id: str) -> NamespacePurgeStatus:
    async def go() -> NamespacePurgeStatus:
        return await (await cli_client()).namespaces.status(purge_id)

    return run_or_exit(go(), PurgeNotFoundError)


def watch_namespace(purge_id: str, interval: float) -> None:
    """One bar for tables, one for files; the exit code tells the final state."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    from icepurge.api.cli.polling import follow_until_closed
    from icepurge.contract.namespace_status import NAMESPACE_TERMINAL_STATES

    async def go() -> NamespacePurgeStatus:
        client = (await cli_client()).namespaces
        columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn())
        # A purge that doesn't exist is one line, with no bar drawn above it.
        current = await client.status(purge_id)
        with Progress(*columns, console=console()) as bars:
            tables = bars.add_task("tables", total=None)
            files = bars.add_task("files", total=None)

            def show(current: NamespacePurgeStatus) -> None:
                running = f", {current.tables_running} running" if current.tables_running else ""
                bars.update(
                    tables,
                    description=f"{current.state.value:<19} tables{running}",
                    completed=current.tables_finished,
                    total=current.tables_total or None,
                )
                bars.update(
                    files,
                    description=f"{'':<19} files",
                    completed=current.files.done,
                    total=current.files.planned or None,
                )

            return await follow_until_closed(
                client.status, purge_id, current, show, NAMESPACE_TERMINAL_STATES, interval=interval
            )

    final = run_or_exit(go(), PurgeNotFoundError)
    say(final_namespace_line(final))
    raise typer.Exit(NAMESPACE_EXIT_CODES.get(final.state.value, 1))


def final_namespace_line(final: NamespacePurgeStatus) -> str:
    from icepurge.contract.namespace_status import NamespacePurgeState

    if final.state is NamespacePurgeState.FAILED:
        return f"FAILED: {final.error_type or 'Error'}: {final.last_error}"
    if final.dry_run:
        line = (
            f"{final.state.value} (dry run): {final.tables_done} of {final.tables_total} tables would be "
            f"purged, {final.tables_skipped} skipped, {final.tables_failed} would fail; "
            f"{final.files.planned} files would be deleted, namespaces it would drop: "
            f"{final.namespaces_dropped}"
        )
    else:
        line = (
            f"{final.state.value}: {final.tables_done} of {final.tables_total} tables purged, "
            f"{final.tables_skipped} skipped, {final.tables_failed} failed; {final.files.deleted} files "
            f"deleted, namespaces dropped: {final.namespaces_dropped}"
        )
    failures = "; ".join(
        f"{failure.table}: {failure.error_type or 'Error'}: {shortened(failure.error, 120)}"
        for failure in final.failure_sample[:3]
    )
    return f"{line}; {failures}" if failures else line
