"""What the `icepurge` commands share: the console, a client, namespace levels from text."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Coroutine
from typing import Any, TypeVar

import typer
from rich.console import Console

from api.client import PurgeClient
from worker.connect import connect
from worker.settings import TemporalSettings

console = Console(stderr=True)
T = TypeVar("T")


def run_or_exit(work: Coroutine[Any, Any, T], *expected: type[Exception]) -> T:
    """Runs a command's work; an expected error is one red line and exit code 2, no traceback."""
    try:
        return asyncio.run(work)
    except expected as error:
        console.print(f"[red]{error}[/red]")
        raise typer.Exit(2) from None


async def cli_client() -> PurgeClient:
    settings = TemporalSettings()
    return PurgeClient(await connect(settings), settings.task_queue)


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
