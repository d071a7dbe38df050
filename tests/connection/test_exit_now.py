"""A script ended by `run_then_exit` exits as `sys.exit` would have, its atexit handlers run."""

from __future__ import annotations

import subprocess
import sys

import pytest

SCRIPT = """
import atexit, sys
from icepurge.connection.exit_now import run_then_exit

def main():
    atexit.register(lambda: print("atexit ran", flush=True))
    ending = sys.argv[1]
    if ending == "usage":
        raise SystemExit("usage: script ENDING")
    if ending == "code":
        sys.exit(3)
    if ending == "error":
        raise ValueError("the script failed")
    if ending == "interrupt":
        raise KeyboardInterrupt
    print("done")

run_then_exit(main)
"""


@pytest.mark.parametrize(
    ("ending", "code", "stdout", "stderr"),
    [
        ("done", 0, "done\natexit ran\n", ""),
        ("usage", 1, "atexit ran\n", "usage: script ENDING"),
        ("code", 3, "atexit ran\n", ""),
        ("error", 1, "atexit ran\n", "ValueError: the script failed"),
        ("interrupt", 130, "atexit ran\n", ""),
    ],
)
def test_a_script_exits_with_the_code_and_output_sys_exit_gives(
    ending: str, code: int, stdout: str, stderr: str
) -> None:
    ended = subprocess.run(
        [sys.executable, "-c", SCRIPT, ending], capture_output=True, text=True, timeout=60, check=False
    )
    assert (ended.returncode, ended.stdout) == (code, stdout)
    assert stderr in ended.stderr
