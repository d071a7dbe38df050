"""Where every `icepurge` command ends: its exit code, and for any error one line that says what
to do, never a traceback (ICEPURGE_DEBUG=1 shows the traceback for a bug report)."""

from __future__ import annotations

import os
import traceback
from collections.abc import Sequence

import typer

# Typer vendors its own click (pinned by uv.lock): its usage errors are these classes.
from typer._click import exceptions as click

from icepurge.api.cli.common import say_error

DEBUG_VARIABLE = "ICEPURGE_DEBUG"
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130
EXIT_UNEXPECTED = 1


def usage_line(error: click.UsageError) -> str:
    command = error.ctx.command_path if error.ctx else "icepurge"
    message = " ".join(error.format_message().split())
    return f"{message} (see `{command} --help`)"


def unexpected_line(error: BaseException) -> str:
    detail = " ".join(str(error).split()) or "no message"
    return (
        f"icepurge stopped on an unexpected error ({type(error).__name__}: {detail}); "
        f"run it again with {DEBUG_VARIABLE}=1 for the traceback and report it"
    )


def exit_code_of(app: typer.Typer, args: Sequence[str] | None = None) -> int:
    """Runs the command line once, printing each error as one line on stderr."""
    try:
        result = app(
            args=list(args) if args is not None else None, prog_name="icepurge", standalone_mode=False
        )
    except typer.Exit as exit_:
        return exit_.exit_code
    except Exception as error:
        line, code = _said(error)
        if line is not None:
            say_error(line)
        return code
    except KeyboardInterrupt:
        say_error("interrupted")
        return EXIT_INTERRUPTED
    # standalone_mode=False hands back the exit code of an exit click raised itself.
    return result if isinstance(result, int) else 0


def _said(error: Exception) -> tuple[str | None, int]:
    """The line an error prints (None: already printed) and the exit code."""
    if isinstance(error, click.NoArgsIsHelpError):
        return None, EXIT_USAGE
    if isinstance(error, click.UsageError):
        return usage_line(error), EXIT_USAGE
    if isinstance(error, click.ClickException):
        return error.format_message(), error.exit_code
    if isinstance(error, typer.Abort):
        return "interrupted", EXIT_INTERRUPTED
    if isinstance(error, OSError):
        # A file named on the command line that can't be read.
        return f"{error.strerror or error}: {error.filename or 'no file named'}", EXIT_USAGE
    if os.environ.get(DEBUG_VARIABLE):
        traceback.print_exception(error)
    return unexpected_line(error), EXIT_UNEXPECTED
