"""What an operator waits for with `make run`: the first start on a fresh clone with empty
package caches, a warm start on the state the first one left, each Ctrl-C, and the CLI's own
start-up (`icepurge --help`, `icepurge purge status ID` against the running API).

The clone is of this repository's HEAD (commit first), in a temporary folder, with its own ports
and state directory; pip's and uv's caches are off (`PIP_NO_CACHE_DIR`, `UV_NO_CACHE`), so every
Python dependency `make run` installs is downloaded.

    .venv/bin/python -m bench.make_run_start [--keep]
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from icepurge.connection.exit_now import run_then_exit
from tests.project.test_readme_walkthroughs import SERVING, run_env

ROOT = Path(__file__).resolve().parent.parent
STARTED_PURGE = re.compile(r"started purge (\S+)")
CLI_RUNS = 5


@dataclass
class Start:
    serving_seconds: float
    ready_line: str
    install_seconds: float | None
    stop_seconds: float
    stopped_line: str
    purge_id: str | None


def _clone(into: Path) -> Path:
    clone = into / "icepurge"
    subprocess.run(["git", "clone", "--quiet", str(ROOT), str(clone)], check=True)
    return clone


def _make_run(
    clone: Path, env: dict[str, str], while_serving: Callable[[str | None], None] | None = None
) -> Start:
    """One `make run` until it serves, then `while_serving(the demo's purge id)`, then Ctrl-C to
    the whole process group, as a terminal sends it."""
    started = time.monotonic()
    process = subprocess.Popen(
        ["make", "run"],
        cwd=clone,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    assert process.stdout is not None
    install_seconds: float | None = None
    ready_line = ""
    purge_id: str | None = None
    for line in process.stdout:
        if install_seconds is None and "icepurge.devstack.run" in line:
            install_seconds = time.monotonic() - started
        if line.startswith("ready in"):
            ready_line = line.strip()
        if purge_id is None and (found := STARTED_PURGE.search(line)):
            purge_id = found.group(1)
        if SERVING in line:
            break
    else:
        raise RuntimeError(f"make run exited ({process.wait()}) before serving")
    serving = time.monotonic() - started
    if while_serving is not None:
        while_serving(purge_id)
    stopping = time.monotonic()
    os.killpg(process.pid, signal.SIGINT)
    stopped_line = ""
    for line in process.stdout:
        if line.startswith("stopped in"):
            stopped_line = line.strip()
    process.wait(timeout=60)
    stop = time.monotonic() - stopping
    return Start(serving, ready_line, install_seconds, stop, stopped_line, purge_id)


def _timed(command: list[str], cwd: Path, env: dict[str, str]) -> float:
    started = time.monotonic()
    subprocess.run(command, cwd=cwd, env=env, check=True, stdout=subprocess.DEVNULL)
    return time.monotonic() - started


def _import_seconds(clone: Path, env: dict[str, str], *args: str) -> float:
    """The CLI's imports alone, from `python -X importtime` (cumulative top-level microseconds)."""
    done = subprocess.run(
        [str(clone / ".venv/bin/python"), "-X", "importtime", "-m", "icepurge.api.cli.main", *args],
        cwd=clone,
        env=env,
        check=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    total = 0
    for line in done.stderr.splitlines():
        parts = line.split("|")
        top_level = len(parts) == 3 and parts[2].startswith(" ") and not parts[2].startswith("  ")
        if top_level and parts[1].strip().isdigit():
            total += int(parts[1])
    return total / 1e6


def _median(values: list[float]) -> float:
    return sorted(values)[len(values) // 2]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keep", action="store_true", help="keep the clone (its path is printed)")
    args = parser.parse_args()
    workdir = Path(tempfile.mkdtemp(prefix="icepurge-start-"))
    try:
        clone = _clone(workdir)
        env = {**run_env(workdir), "PIP_NO_CACHE_DIR": "1", "UV_NO_CACHE": "1"}
        first = _make_run(clone, env)
        print(f"first make run (fresh clone, empty caches): serving after {first.serving_seconds:.1f} s")
        print(f"  install: {first.install_seconds or 0:.1f} s; stack: {first.ready_line}")
        print(f"  Ctrl-C: {first.stop_seconds:.1f} s to exit ({first.stopped_line})")
        icepurge = str(clone / ".venv/bin/icepurge")
        status_args = ["purge", "status", first.purge_id or "missing"]
        status: dict[str, float] = {}

        def time_status(_: str | None) -> None:
            status["wall"] = _median([_timed([icepurge, *status_args], clone, env) for _ in range(CLI_RUNS)])
            status["imports"] = _median([_import_seconds(clone, env, *status_args) for _ in range(CLI_RUNS)])

        warm = _make_run(clone, env, time_status)
        print(f"warm make run: serving after {warm.serving_seconds:.1f} s ({warm.ready_line})")
        print(f"  Ctrl-C: {warm.stop_seconds:.1f} s to exit ({warm.stopped_line})")
        help_wall = _median([_timed([icepurge, "--help"], clone, env) for _ in range(CLI_RUNS)])
        help_imports = _median([_import_seconds(clone, env, "--help") for _ in range(CLI_RUNS)])
        print(f"CLI start-up, median of {CLI_RUNS} (wall / imports by python -X importtime):")
        print(f"  icepurge --help: {help_wall:.2f} s / {help_imports:.2f} s")
        print(f"  icepurge purge status ID (HTTP API): {status['wall']:.2f} s / {status['imports']:.2f} s")
    finally:
        if args.keep:
            print(f"clone kept in {workdir}")
        else:
            shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    run_then_exit(main)
