"""`icepurge purge` controls: cancel, pause, resume, the rate budget, rerun, and a soft
delete's undrop and expedite. A namespace purge's id (icepurge-ns-...) takes the control for the
whole namespace purge."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from icepurge.api.cli.common import cli_client, console, json_argument, run_or_exit, say
from icepurge.api.cli.groups import purge
from icepurge.api.clients.errors import PurgeControlRejectedError, PurgeNotFoundError
from icepurge.contract.names import NAMESPACE_ID_PREFIX

if TYPE_CHECKING:
    from icepurge.api.clients.protocol import NamespacePurges, Purges
    from icepurge.contract.namespace_status import NamespacePurgeStatus
    from icepurge.contract.status import PurgeStatus

    Controllable = Purges | NamespacePurges


@purge.command("undrop")
def undrop(purge_id: str) -> None:
    """End a SCHEDULED purge with nothing deleted and register its table again."""
    _control(purge_id, "undropped", lambda client: _table_purges(client).undrop(purge_id))


@purge.command("expedite")
def expedite(purge_id: str) -> None:
    """Start a SCHEDULED purge's deletes now."""
    _control(purge_id, "expedited", lambda client: _table_purges(client).expedite(purge_id))


@purge.command("cancel")
def cancel(purge_id: str) -> None:
    """Ask a purge to stop; it ends CANCELLED once its running chunks have stopped."""

    async def go() -> None:
        await (await cli_client()).cancel(purge_id)

    run_or_exit(go(), PurgeNotFoundError, PurgeControlRejectedError)
    say(f"cancel requested for {purge_id}")


def _table_purges(client: Controllable) -> Purges:
    from icepurge.api.clients.protocol import Purges

    if isinstance(client, Purges):
        return client
    raise PurgeControlRejectedError(
        "undrop and expedite act on table purges: list a namespace purge's with `icepurge purge tables ID`"
    )


def _control(
    purge_id: str,
    action: str,
    call: Callable[[Controllable], Awaitable[PurgeStatus | NamespacePurgeStatus]],
) -> None:
    """A namespace purge's id (icepurge-ns-...) takes the control for the whole namespace purge."""

    async def go() -> PurgeStatus | NamespacePurgeStatus:
        client = await cli_client()
        return await call(client.namespaces if purge_id.startswith(NAMESPACE_ID_PREFIX) else client)

    from icepurge.contract.namespace_status import NamespacePurgeStatus
    from icepurge.contract.validation import InvalidPurgeRequestError

    current = run_or_exit(go(), PurgeNotFoundError, PurgeControlRejectedError, InvalidPurgeRequestError)
    if isinstance(current, NamespacePurgeStatus):
        done = f"{current.tables_finished} of {current.tables_total} tables finished"
        say(f"{purge_id} {action}; now {current.state.value}{' (paused)' if current.paused else ''}, {done}")
        return
    say(f"{purge_id} {action}; now {current.state.value}, {current.files_done} files done")


@purge.command("rerun")
def rerun(
    purge_id: str,
    file_io_properties: Annotated[
        Path | None,
        typer.Option(help="JSON file of new FileIO properties (fixed credentials); default: the last run's."),
    ] = None,
) -> None:
    """Run a closed purge again: one that FAILED, was CANCELLED or SUCCEEDED_WITH_ERRORS."""
    from icepurge.contract.validation import InvalidPurgeRequestError

    properties = json_argument(file_io_properties, "--file-io-properties") if file_io_properties else None

    async def go() -> str:
        return await (await cli_client()).rerun(purge_id, properties)

    run_or_exit(go(), PurgeNotFoundError, PurgeControlRejectedError, InvalidPurgeRequestError)
    say(f"{purge_id} running again")


@purge.command("pause")
def pause(purge_id: str) -> None:
    """Pause a purge: its running chunks stop at their checkpoints, no new ones start."""
    _control(purge_id, "paused", lambda client: client.pause(purge_id))


@purge.command("resume")
def resume(purge_id: str) -> None:
    """Resume a paused purge."""
    _control(purge_id, "resumed", lambda client: client.resume(purge_id))


@purge.command("rate")
def rate(
    purge_id: str,
    requests_per_second: Annotated[
        float | None, typer.Argument(help="Delete requests per second per bucket.")
    ] = None,
    unlimited: Annotated[bool, typer.Option("--unlimited", help="Remove the budget.")] = False,
) -> None:
    """Change a running purge's rate budget; it takes hold within seconds."""
    if (requests_per_second is None) != unlimited:
        console().print("[red]give a number of requests per second, or --unlimited[/red]")
        raise typer.Exit(2)
    budget = "unlimited" if unlimited else f"{requests_per_second:g} requests/s per bucket"
    _control(
        purge_id,
        f"budget set to {budget}",
        lambda client: client.set_rate_budget(purge_id, requests_per_second),
    )
