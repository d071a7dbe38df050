"""Ending a process that has held a Temporal client without finalizing the interpreter.

Why: the client's native threads can call into Python while the interpreter finalizes, and that
aborts the process (`Fatal Python error: PyGILState_Release`, temporalio/sdk-python#300) after its
work is done, with exit status -6. Skipping finalization keeps the exit status the work earned."""

from __future__ import annotations

import atexit
import os
import sys
import traceback
from collections.abc import Callable
from typing import NoReturn

INTERRUPTED_EXIT_CODE = 130


def exit_now(code: int) -> NoReturn:
    """Flush what was printed, then end the process without finalizing the interpreter."""
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


def run_then_exit(main: Callable[[], object]) -> NoReturn:
    """Run a script's `main`, then end as `sys.exit` would have, without finalizing: its atexit
    handlers still run (temporary folders removed, logs flushed), before the interpreter would
    begin to finalize."""
    code = _exit_code(main)
    atexit._run_exitfuncs()
    exit_now(code)


def _exit_code(main: Callable[[], object]) -> int:
    try:
        main()
    except SystemExit as stopped:
        if stopped.code is None or isinstance(stopped.code, int):
            return stopped.code or 0
        print(stopped.code, file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return INTERRUPTED_EXIT_CODE
    except BaseException:
        traceback.print_exc()
        return 1
    return 0
