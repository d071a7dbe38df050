"""What the `icepurge` commands share: the console, a client, namespace levels from text."""

from __future__ import annotations

import json
import sys
from collections.abc import Coroutine
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import typer

from icepurge.api.clients.errors import (
    PurgeAccessDeniedError,
    PurgeControlRejectedError,
    PurgeNotFoundError,
    PurgeReportUnavailableError,
    PurgeServiceUnavailableError,
)
from icepurge.connection.errors import CodecKeyError, TemporalUnreachableError, undecodable

if TYPE_CHECKING:
    from rich.console import Console

    from icepurge.api.cli.settings import CliSettings
    from icepurge.api.clients.protocol import Purges
    from icepurge.contract.started import StartOutcome


@cache
def console() -> Console:
    """stderr, made on first use (rich's console costs 60 ms of every start, `--help`'s too).
    Messages are never cut into lines at the terminal's width: a pasted id or path stays whole."""
    from rich.console import Console

    return Console(stderr=True, soft_wrap=True)


T = TypeVar("T")


class PlaintextCredentialsError(RuntimeError):
    """A direct start would put FileIO credentials in history unsealed; the message says what to set."""


def _always() -> tuple[type[Exception], ...]:
    """Errors any command may meet, whatever it expects: each is one line, never a traceback."""
    from icepurge.contract.validation import InvalidPurgeRequestError

    return (
        PurgeServiceUnavailableError,
        PurgeAccessDeniedError,
        PurgeNotFoundError,
        PurgeControlRejectedError,
        PurgeReportUnavailableError,
        InvalidPurgeRequestError,
        CodecKeyError,
        PlaintextCredentialsError,
        TemporalUnreachableError,
    )


def run_or_exit(work: Coroutine[Any, Any, T], *expected: type[Exception]) -> T:
    """Runs a command's work; an expected error is one red line and exit code 2, no traceback."""
    import asyncio

    caught: tuple[type[Exception], ...] = (*expected, *_always())
    try:
        return asyncio.run(work)
    except caught as error:
        say_error(str(error))
        raise typer.Exit(2) from None
    except KeyError as error:
        if not undecodable(error):
            raise
        say_error(undecodable_hint(str(error).strip("'")))
        raise typer.Exit(2) from None


def say(text: str) -> None:
    """A command's result, on stdout, as it is (progress, hints and errors go to stderr): what
    `ID=$(...)`, a pipe or a redirect takes."""
    print(text, flush=True)


def say_error(text: str) -> None:
    """One line, whatever the terminal's width, and brackets in the text are not markup."""
    console().print(text, style="red", markup=False, highlight=False, soft_wrap=True)


def undecodable_hint(detail: str) -> str:
    return (
        f"can't read the purge's payloads ({detail}): they are sealed by the payload codec. "
        "Set ICEPURGE_CODEC_KEYS as on the workers, or leave out --direct to go through the HTTP API."
    )


def refuse_plaintext_credentials() -> None:
    """The workers seal history; a direct start without the codec key would not."""
    from icepurge.connection.settings import TemporalSettings

    if TemporalSettings().payload_codec() is None:
        raise PlaintextCredentialsError(
            "refusing to write FileIO credentials into Temporal history unsealed: set "
            "ICEPURGE_CODEC_KEYS as on the workers, or leave out --direct to start through the HTTP API"
        )


def json_argument(source: Path, what: str) -> Any:
    """A JSON document from a file the command names (- for stdin); bad JSON is one line, exit 2."""
    text = sys.stdin.read() if str(source) == "-" else source.read_text()
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        say_error(f"{what} is not valid JSON: {error}")
        raise typer.Exit(2) from None


def cli_settings() -> CliSettings:
    from pydantic import ValidationError

    from icepurge.api.cli.settings import CliSettings

    try:
        return CliSettings()
    except ValidationError as error:
        console().print(f"[red]CLI settings: {error.errors()[0]['msg']}[/red]")
        raise typer.Exit(2) from None


async def cli_client() -> Purges:
    """Over HTTP by default; Temporal's client is imported only for --direct."""
    settings = cli_settings()
    if not settings.cli_direct:
        from icepurge.api.clients.http_client import HttpPurgeClient

        return HttpPurgeClient(settings.api_url, settings.token())
    from icepurge.api.clients.temporal_client import PurgeClient
    from icepurge.connection.connect import connect
    from icepurge.connection.settings import TemporalSettings

    temporal = TemporalSettings()
    return PurgeClient(await connect(temporal, warn_plaintext=False), temporal.task_queue)


def started_saying_if_closed(outcome: StartOutcome) -> str:
    """A start that found its purge already closed changed nothing: says so, and how to rerun."""
    if outcome.closed is not None:
        console().print(outcome.closed, style="yellow", markup=False, highlight=False)
    return outcome.purge_id


def namespace_levels(text: str) -> list[str]:
    """`a.b` is the levels a and b; a level that holds a dot is given as a JSON list:
    `'["a.b", "c"]'` is the levels a.b and c."""
    if text.lstrip().startswith("["):
        try:
            parsed = json.loads(text)
        except json.JSONDecodeError as error:
            raise typer.BadParameter(f"not a JSON list of levels: {error}") from None
        if not isinstance(parsed, list) or not all(isinstance(level, str) for level in parsed):
            raise typer.BadParameter('a JSON list of strings, e.g. \'["a.b", "c"]\'')
        levels: list[str] = parsed
    else:
        levels = text.split(".")
    if not levels or not all(levels):
        raise typer.BadParameter("give at least one level, and no empty level (a..b)")
    return levels
