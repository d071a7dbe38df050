"""The `icepurge` command line: run a worker, start and follow purges."""

from __future__ import annotations

import json
import logging
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated
from urllib.parse import unquote

import typer

# Every command registers itself with a decorator where it is defined (the namespace commands too,
# imported below for the helpers main uses): these modules hold only commands.
from icepurge.api.cli import controls, report  # noqa: F401
from icepurge.api.cli.boundary import exit_code_of
from icepurge.api.cli.common import (
    cli_client,
    cli_settings,
    console,
    json_argument,
    namespace_levels,
    refuse_plaintext_credentials,
    run_or_exit,
    say,
    say_error,
    started_saying_if_closed,
)
from icepurge.api.cli.groups import admin, app, purge
from icepurge.api.cli.namespace import (
    namespace_status,
    purge_tables,
    skipped_entries,
    watch_namespace,
)
from icepurge.api.clients.errors import PurgeNotFoundError
from icepurge.connection.exit_now import exit_now
from icepurge.contract.kinds import PurgeKind
from icepurge.contract.names import NAMESPACE_ID_PREFIX
from icepurge.contract.reasons import typed_reason, waiting_reason
from icepurge.contract.roles import Role
from icepurge.contract.states import TERMINAL_STATES, PurgeState

if TYPE_CHECKING:
    from rich.table import Table

    from icepurge.api.clients.listing import PurgePage
    from icepurge.contract.status import PurgeStatus

# The modules a command needs (pydantic's models, the HTTP and Temporal clients, rich's widgets)
# are imported inside it: `icepurge --help` loads none of them.
# httpx imports its own command line (click, rich's console, pygments) whenever click is installed:
# an eighth of `purge status`'s start-up, for a program icepurge never runs.
sys.modules.setdefault("httpx._main", None)  # type: ignore[arg-type]


@app.callback()
def connection(
    direct: Annotated[
        bool,
        typer.Option(
            "--direct",
            help="Talk to Temporal directly (ICEPURGE_TEMPORAL_ADDRESS, ICEPURGE_CODEC_KEYS) instead of "
            "the HTTP API (ICEPURGE_API_URL, ICEPURGE_API_TOKEN or ICEPURGE_API_TOKEN_FILE).",
        ),
    ] = False,
) -> None:
    """icepurge: durable purges of dropped Iceberg tables."""
    if direct:
        os.environ["ICEPURGE_CLI_DIRECT"] = "true"


EXIT_CODES = {
    PurgeState.SUCCEEDED: 0,
    PurgeState.SUCCEEDED_WITH_ERRORS: 3,
    PurgeState.FAILED: 4,
    PurgeState.CANCELLED: 5,
    PurgeState.UNDROPPED: 6,
}


@app.command("worker")
def worker(
    processes: Annotated[
        int | None,
        typer.Option(min=0, help="Worker processes (default ICEPURGE_WORKER_PROCESSES; 0: one a core)."),
    ] = None,
) -> None:
    """Run a worker (configured by ICEPURGE_* environment variables) until SIGINT/SIGTERM."""

    from icepurge.connection.tracing import TracingUnavailableError
    from icepurge.worker.cpu_cores import usable_cores
    from icepurge.worker.processes import WorkerProcessFailedError, bind_to_supervisor, supervise
    from icepurge.worker.run import S3ClientChoiceError, serve
    from icepurge.worker.settings import WorkerSettings

    bind_to_supervisor()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s %(message)s")
    settings = WorkerSettings()
    count = processes if processes is not None else settings.worker_processes
    count = count or usable_cores()
    if count == 1:
        run_or_exit(serve(settings), S3ClientChoiceError, TracingUnavailableError)
    else:
        run_or_exit(
            supervise(settings, count), WorkerProcessFailedError, S3ClientChoiceError, TracingUnavailableError
        )


@app.command("api")
def api() -> None:
    """Serve the HTTP API (ICEPURGE_API_* variables) with uvicorn until SIGINT/SIGTERM."""
    import uvicorn

    from icepurge.api.server.app import create_app
    from icepurge.api.server.settings import ApiSettings
    from icepurge.connection.tracing import TracingUnavailableError, start_tracing

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s %(message)s")
    settings = ApiSettings()
    try:
        start_tracing("icepurge-api")
    except TracingUnavailableError as error:
        say_error(str(error))
        raise typer.Exit(2) from None
    if settings.api_insecure_dev:
        console().print("[yellow]INSECURE DEV MODE: the API accepts every request without a token[/yellow]")
    uvicorn.run(
        create_app(settings),
        host=settings.api_host,
        port=settings.api_port,
        log_level="info",
        timeout_keep_alive=settings.api_keep_alive_seconds,
    )


@app.command("doctor")
def doctor(
    as_json: Annotated[bool, typer.Option("--json", help="Print the checks as JSON.")] = False,
) -> None:
    """Check the API and the token's roles, Temporal and its search attributes, the workers and
    their payload codec, the state location, each catalog and Spark; say how to fix what fails.
    Exit code 0 only when every check passes. With --direct, the checks run here, not in the API."""
    import asyncio

    from icepurge.api.cli.doctor import print_results, run_checks

    print_results(asyncio.run(run_checks(cli_settings())), as_json=as_json)


@app.command("token")
def token(
    name: Annotated[str, typer.Argument(help="Who will hold the token.")],
    catalog: Annotated[list[str], typer.Option(help="Catalog it may use (repeat; * = all).")],
    role: Annotated[list[Role], typer.Option(help=f"{', '.join(role.value for role in Role)} (repeat).")],
) -> None:
    """Mint an API token: prints the token (give it to its holder) and the token-file entry."""
    from icepurge.api.server.auth import TokenEntry, new_token

    secret, digest = new_token()
    entry = TokenEntry(name=name, sha256=digest, catalogs=frozenset(catalog), roles=frozenset(role))
    console().print("token (shown once):")
    print(secret)
    console().print('entry for the token file\'s "tokens" list:')
    print(entry.model_dump_json())


@purge.command("start")
def start(request_file: Annotated[Path, typer.Argument(help="Request JSON file, or - for stdin.")]) -> None:
    """Start a purge (or attach to the running one for the same table snapshot); prints its id."""
    from icepurge.api.clients.temporal_client import PurgeClient
    from icepurge.contract.validation import InvalidPurgeRequestError

    raw = json_argument(request_file, "request")

    async def go() -> str:
        client = await cli_client()
        credentials = isinstance(raw, dict) and bool(raw.get("file_io_properties"))
        if isinstance(client, PurgeClient) and credentials:
            refuse_plaintext_credentials()
        return started_saying_if_closed(await client.begin(raw))

    print(run_or_exit(go(), InvalidPurgeRequestError))


@purge.command("table")
def purge_table(
    catalog: Annotated[str, typer.Argument(help="A catalog configured on the workers.")],
    namespace: Annotated[
        str,
        typer.Argument(help='Levels joined by dots (a.b); a level holding a dot: \'["a.b","c"]\'.'),
    ],
    table: Annotated[str, typer.Argument()],
    *,
    purge_after: Annotated[
        int, typer.Option(help="Soft delete: wait this many seconds (SCHEDULED) before deleting.")
    ] = 0,
    dry_run: Annotated[bool, typer.Option(help="Plan and list; drop and delete nothing.")] = False,
    request_id: Annotated[str | None, typer.Option(help="Makes a retried command idempotent.")] = None,
    requested_by: Annotated[str | None, typer.Option(help="Default: $USER.")] = None,
) -> None:
    """Drop a table from its catalog and purge it: load, plan, drop, delete. Prints the purge id."""
    from icepurge.contract.validation import InvalidPurgeRequestError, by_name_request

    levels = namespace_levels(namespace)
    options = {"purge_after_seconds": purge_after, "dry_run": dry_run}
    who = requested_by or os.environ.get("USER") or "icepurge-cli"

    async def go() -> str:
        client = await cli_client()
        request = by_name_request(
            catalog, levels, table, requested_by=who, options=options, request_id=request_id
        )
        return started_saying_if_closed(await client.begin(request))

    print(run_or_exit(go(), InvalidPurgeRequestError))


@purge.command("id")
def purge_id(
    catalog: Annotated[str, typer.Argument()],
    namespace: Annotated[
        str,
        typer.Argument(help='Levels joined by dots (a.b); a level holding a dot: \'["a.b","c"]\'.'),
    ],
    table: Annotated[str, typer.Argument()],
    *,
    dry_run: Annotated[bool, typer.Option(help="The id of the table's dry run.")] = False,
    request_id: Annotated[str | None, typer.Option(help="The request id the purge was started with.")] = None,
) -> None:
    """Print the id of a table's purge by name: the one `purge table` starts, and the one a front
    door's drop with purge starts (its client sees no id). Nothing is asked of any service."""
    from icepurge.contract.purge_id import purge_id_for
    from icepurge.contract.validation import InvalidPurgeRequestError, by_name_request

    try:
        request = by_name_request(
            catalog,
            namespace_levels(namespace),
            table,
            requested_by="icepurge-cli",
            options={"dry_run": dry_run},
            request_id=request_id,
        )
    except InvalidPurgeRequestError as error:
        say_error(str(error))
        raise typer.Exit(2) from None
    say(purge_id_for(request))


@purge.command("status")
def status(purge_id: str) -> None:
    """Print a purge's (or a namespace purge's) status as JSON."""
    if purge_id.startswith(NAMESPACE_ID_PREFIX):
        print(namespace_status(purge_id).model_dump_json(indent=2))
        return

    async def go() -> PurgeStatus:
        return await (await cli_client()).status(purge_id)

    print(run_or_exit(go(), PurgeNotFoundError).model_dump_json(indent=2))


@purge.command("watch")
def watch(
    purge_id: str, interval: Annotated[float, typer.Option(help="Seconds between polls.")] = 1.0
) -> None:
    """Follow a purge with a live progress bar (a namespace purge: tables and files); the exit
    code tells the final state."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    from icepurge.api.cli.polling import follow_until_closed

    if purge_id.startswith(NAMESPACE_ID_PREFIX):
        watch_namespace(purge_id, interval)

    async def go() -> PurgeStatus:
        client = await cli_client()
        columns = (
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[rate]} files/s"),
            TimeRemainingColumn(),
        )
        # A purge that doesn't exist is one line, with no bar drawn above it.
        current = await client.status(purge_id)
        said = None
        with Progress(*columns, console=console()) as bar:
            task = bar.add_task(purge_id, total=None, rate="-")

            def show(current: PurgeStatus) -> None:
                nonlocal said
                retrying = current.retrying
                note = f" (retrying {retrying.step}, attempt {retrying.attempt})" if retrying else ""
                waiting = (
                    waiting_reason(retrying.step, retrying.attempt, retrying.last_error) if retrying else None
                )
                if waiting and waiting != said:
                    # Above the bar, once per new reason: what the purge waits for, and why.
                    bar.console.print(f"waiting: {waiting}", markup=False, highlight=False)
                said = waiting
                bar.update(
                    task,
                    description=f"{current.state.value:<21} {current.table}{note}",
                    completed=current.files_done,
                    total=current.files_total or None,
                    rate=f"{current.rate_files_per_second or 0:.0f}",
                )

            return await follow_until_closed(
                client.status, purge_id, current, show, TERMINAL_STATES, interval=interval
            )

    final = run_or_exit(go(), PurgeNotFoundError)
    say(_final_line(final))
    raise typer.Exit(EXIT_CODES.get(final.state, 1))


def _final_line(final: PurgeStatus) -> str:
    if final.state is PurgeState.FAILED:
        return f"FAILED: {typed_reason(final.last_error or 'no reason recorded', final.error_type)}"
    if final.state is PurgeState.UNDROPPED:
        return f"UNDROPPED: nothing deleted; {final.undropped_note}"
    if final.state is PurgeState.CANCELLED:
        return f"CANCELLED: {final.counts.total().deleted} files deleted before it stopped"
    line = f"{final.state.value}: {final.counts.total().deleted} files deleted"
    if final.outcome_note:
        line += f", {final.outcome_note}"
    if final.dry_run:
        line = f"{final.state.value} (dry run): {final.files_total} files would be deleted"
    if final.failures_total:
        first = final.failure_sample[0] if final.failure_sample else None
        example = f" (first: {first.path}: {first.error})" if first else ""
        line += f", {final.failures_total} failed{example}"
    if final.report_location and (final.failures_total or final.dry_run or final.unreadable_files):
        line += f"; `icepurge purge report {final.purge_id}` lists them"
    return line


@admin.command("codec-key")
def codec_key(key_id: Annotated[str, typer.Argument(help="A name for the key.")] = "k1") -> None:
    """Print a new payload-codec key as an env-file line (ICEPURGE_CODEC_KEYS=...). To rotate, add
    the new key next to the old ones and point ICEPURGE_CODEC_KEY_ID at it."""
    from icepurge.connection.payload_codec import new_key

    print(f"ICEPURGE_CODEC_KEYS={json.dumps({key_id: new_key()})}")


@admin.command("setup")
def setup() -> None:
    """Register icepurge's search attributes in ICEPURGE_TEMPORAL_NAMESPACE (safe to repeat)."""
    from icepurge.api.server.admin_setup import SearchAttributeConflictError, ensure_search_attributes
    from icepurge.connection.connect import connect
    from icepurge.connection.settings import TemporalSettings

    settings = TemporalSettings()

    async def go() -> list[str]:
        return await ensure_search_attributes(await connect(settings), settings.temporal_namespace)

    added = run_or_exit(go(), SearchAttributeConflictError)
    namespace = settings.temporal_namespace
    say(f"added to {namespace}: {', '.join(added)}" if added else f"{namespace} was ready")


@purge.command("list")
def list_purges(
    *,
    kind: Annotated[
        PurgeKind | None, typer.Option(help="Only table or only namespace purges (default: both).")
    ] = None,
    state: Annotated[PurgeState | None, typer.Option(help="Only purges in this state.")] = None,
    catalog: Annotated[str | None, typer.Option()] = None,
    namespace: Annotated[
        list[str] | None, typer.Option(help="A namespace level (repeat, outermost first).")
    ] = None,
    table: Annotated[str | None, typer.Option()] = None,
    requested_by: Annotated[str | None, typer.Option()] = None,
    limit: Annotated[int, typer.Option(min=1, max=1000)] = 50,
) -> None:
    """List table and namespace purges, newest first, as a table; the reason column says why a
    purge failed, or what a running one waits for."""
    from icepurge.api.clients.listing import PurgeFilter
    from icepurge.contract.validation import InvalidPurgeRequestError

    purge_filter = PurgeFilter(
        kind=kind,
        state=state,
        catalog=catalog,
        namespace=namespace or None,
        table=table,
        requested_by=requested_by,
    )

    async def go() -> PurgePage:
        return await (await cli_client()).list(purge_filter, page_size=limit)

    _print_page(run_or_exit(go(), InvalidPurgeRequestError))


@purge.command("tables")
def tables(
    purge_id: str,
    limit: Annotated[int, typer.Option(min=1, max=1000, help="Table purges per page.")] = 50,
    page_token: Annotated[str | None, typer.Option(help="The token the previous page printed.")] = None,
) -> None:
    """List the table purges a namespace purge started, newest first, then the tables its batches
    purged (no workflow of their own: their records stand in)."""
    page = purge_tables(purge_id, limit, page_token)
    _print_page(page)
    if page.next_page_token:
        console().print(f"more: --page-token {page.next_page_token}")


@purge.command("skipped")
def skipped(
    purge_id: str,
    offset: Annotated[int, typer.Option(min=0, help="Entries to skip: the previous page's next offset.")] = 0,
    limit: Annotated[int, typer.Option(min=1, max=10_000, help="Entries per page.")] = 1000,
) -> None:
    """List what a namespace purge's enumeration left alone, and why: tables its selection didn't
    select, protected namespaces, views, other engines' entries. With a dry run and `purge tables`,
    exactly what the real purge would purge and leave."""
    from rich.table import Table

    page = skipped_entries(purge_id, offset, limit)
    listing = Table("kind", "name", "reason")
    for entry in page.entries:
        listing.add_row(entry.kind.value, entry.name, entry.reason)
    _print_listing(listing)
    if page.next_offset is not None:
        console().print(f"more: --offset {page.next_offset}")


def _print_page(page: PurgePage) -> None:
    from rich.table import Table

    listing = Table("kind", "state", "name", "files", "deleted", "failed", "started", "reason")
    listing.add_column("purge id", no_wrap=True)
    for item in page.items:
        levels = unquote(item.namespace).split("\x1f") if item.namespace else []
        name = ".".join(part for part in (item.catalog, *levels, item.table) if part)
        listing.add_row(
            item.kind.value,
            item.state or "",
            name,
            str(item.files_total or ""),
            str(item.files_deleted or ""),
            str(item.files_failed or ""),
            f"{item.started_at:%Y-%m-%d %H:%M:%S}" if item.started_at else "",
            _truncated(item.reason or ""),
            item.purge_id,
        )
    _print_listing(listing)


def _print_listing(listing: Table) -> None:
    from rich.console import Console

    # Piped output is not cut to 80 columns.
    Console(width=None if sys.stdout.isatty() else 250).print(listing)


def _truncated(text: str, limit: int = 120) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def main() -> None:
    exit_now(exit_code_of(app))


if __name__ == "__main__":
    main()
