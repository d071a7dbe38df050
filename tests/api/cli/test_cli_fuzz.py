"""The CLI's arguments fuzzed the way the API is: every command, arguments drawn from junk, edge
values and the command's own options, against a live API. Whatever the input: an exit code the
README documents, no traceback, and every error one line that is not "unexpected"."""

from __future__ import annotations

import asyncio
import contextlib
import io
import random
from pathlib import Path

import pytest
import typer.main
from typer._click.core import Command

import icepurge.api.cli.main  # noqa: F401  # registers every command on the app
from icepurge.api.cli.boundary import exit_code_of
from icepurge.api.cli.groups import app
from tests.api_server import TOKENS

# Serving commands run until stopped; they are not argument parsers to fuzz.
SERVING = {("worker",), ("api",)}
EXAMPLES = 300
# 1: doctor found a failing check (or a bug, which the message check below catches).
DOCUMENTED_EXIT_CODES = {0, 1, 2, 3, 4, 5, 6}
JUNK = [
    "",
    " ",
    "-",
    "--",
    "nosuchcatalog",
    "icepurge-nosuch-0000",
    "icepurge-ns-nosuch-0000",
    "a.b",
    "a..b",
    ".",
    "[",
    '["a.b", "c"]',
    '["", 1]',
    "[]",
    "{}",
    "0",
    "-1",
    "1e309",
    "nan",
    "18446744073709551617",
    "ünïcødé",
    "\x1f",
    "x" * 300,
    "/nonexistent/file.json",
    "%2F..%2F",
    "*",
]


def commands() -> dict[tuple[str, ...], Command]:
    found: dict[tuple[str, ...], Command] = {}

    def walk(command: Command, path: tuple[str, ...]) -> None:
        subcommands: dict[str, Command] | None = getattr(command, "commands", None)
        if subcommands:
            for name, sub in subcommands.items():
                walk(sub, (*path, name))
        elif path not in SERVING:
            found[path] = command

    walk(typer.main.get_command(app), ())
    return found


def arguments(draw: random.Random, command: Command, bad_file: Path) -> list[str]:
    options = [opt for param in command.params for opt in param.opts if opt.startswith("--")]
    pool = [*JUNK, str(bad_file), "lake", "fuzz_nosuch"]
    drawn: list[str] = []
    for _ in range(draw.randint(0, 5)):
        if options and draw.random() < 0.4:
            drawn.append(draw.choice(options))
        drawn.append(draw.choice(pool))
    return drawn


def run_once(args: list[str]) -> tuple[int, str]:
    errors = io.StringIO()
    with contextlib.redirect_stderr(errors), contextlib.redirect_stdout(io.StringIO()):
        code = exit_code_of(app, args)
    return code, errors.getvalue()


@pytest.mark.timeout(900)
async def test_no_argument_makes_the_cli_print_a_traceback(
    api_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    token = tmp_path / "token"
    token.write_text(TOKENS["admin"][0] + "\n")
    bad_file = tmp_path / "bad.json"
    bad_file.write_text("{")
    monkeypatch.setenv("ICEPURGE_API_URL", api_url)
    monkeypatch.setenv("ICEPURGE_API_TOKEN_FILE", str(token))
    monkeypatch.setenv("COLUMNS", "120")
    monkeypatch.delenv("ICEPURGE_CLI_DIRECT", raising=False)
    draw = random.Random(20261125)
    every = commands()
    paths = sorted(every)
    assert ("purge", "table") in paths and ("purge", "list") in paths, paths
    for named in (
        ["purge", "table", "nosuchcatalog", "a", "x"],
        ["purge", "namespace", "nosuchcatalog", "x"],
    ):
        code, errors = await asyncio.to_thread(run_once, named)
        assert code == 2, errors
        assert "nosuchcatalog" in errors and len(errors.strip().splitlines()) == 1, errors
    seen: list[str] = []
    for _ in range(EXAMPLES):
        path = draw.choice(paths)
        args = [*path, *arguments(draw, every[path], bad_file)]
        code, errors = await asyncio.to_thread(run_once, args)
        seen.append(" ".join(args))
        assert "Traceback" not in errors, (args, errors)
        assert "unexpected error" not in errors, (args, errors)
        assert code in DOCUMENTED_EXIT_CODES, (args, code, errors)
        if errors.strip() and "Usage:" not in errors:
            # An error is one line (a help page printed for a bare group is not an error line).
            assert len(errors.strip().splitlines()) == 1, (args, errors)
    assert len({line.split()[0:2][-1] for line in seen}) > 5
