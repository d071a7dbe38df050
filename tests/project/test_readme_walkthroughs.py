"""Every walkthrough of the README and the docs pages, run verbatim against a `make run` stack
(its own ports and state directory), compared with the output the page shows: the text can't go
stale. Then Ctrl-C stops everything `make run` started, saying so."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from icepurge.devstack.free_ports import free_port_block
from tests.paths import ROOT
from tests.readme_walkthrough import Step, output_matches, site_pages, walkthrough_steps

README_API = "http://127.0.0.1:8000"
SERVING = "serving; Ctrl-C stops everything"
PORT_BLOCK = 11


def run_env(tmp_path: Path) -> dict[str, str]:
    """A shell's environment as an operator has it: none of the test session's catalogs or
    icepurge settings (its fixtures put them in os.environ)."""
    base = free_port_block(PORT_BLOCK + 4)
    inherited = {
        key: value for key, value in os.environ.items() if not key.startswith(("PYICEBERG_", "ICEPURGE_"))
    }
    return {
        **inherited,
        "ICEPURGE_RUN_STATE_DIR": str(tmp_path / "run"),
        "ICEPURGE_PORT_BASE": str(base),
        "ICEPURGE_TEMPORAL_PORT": str(base + PORT_BLOCK),
        "ICEPURGE_UI_PORT": str(base + PORT_BLOCK + 1),
        "ICEPURGE_S3_PORT": str(base + PORT_BLOCK + 2),
        "ICEPURGE_API_PORT": str(base + PORT_BLOCK + 3),
        "ICEPURGE_API_URL": f"http://127.0.0.1:{base + PORT_BLOCK + 3}",
        "COLUMNS": "100",
    }


def start_make_run(env: dict[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "icepurge.devstack.run"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


@pytest.fixture
def make_run(tmp_path: Path) -> Iterator[tuple[subprocess.Popen[str], dict[str, str]]]:
    env = run_env(tmp_path)
    process = start_make_run(env)
    try:
        yield process, env
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def ctrl_c(process: subprocess.Popen[str]) -> str:
    process.send_signal(signal.SIGINT)
    ended = read_until(process, "stopped in", timeout=60)
    assert process.wait(timeout=30) == 0
    return ended[-1]


def read_until(process: subprocess.Popen[str], marker: str, timeout: float) -> list[str]:
    assert process.stdout is not None
    lines: list[str] = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        line = process.stdout.readline()
        if not line:
            break
        lines.append(line.rstrip("\n"))
        if marker in line:
            return lines
    raise AssertionError(f"never printed {marker!r}:\n" + "\n".join(lines))


def run_step(step: Step, env: dict[str, str], workdir: Path) -> list[str]:
    """One command as a shell runs it (the README's URL replaced by this stack's); its output as
    a terminal shows it, stdout and stderr interleaved."""
    assigned = step.assignment()
    command = (assigned[1] if assigned else step.command).replace(README_API, env["ICEPURGE_API_URL"])
    done = subprocess.run(
        ["bash", "-c", command],
        check=False,
        cwd=workdir,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE if assigned else subprocess.STDOUT,
        text=True,
        timeout=240,
    )
    if assigned:
        env[assigned[0]] = done.stdout.strip()
    shown = done.stderr if assigned else done.stdout
    return shown.replace(env["ICEPURGE_API_URL"], README_API).splitlines()


@pytest.mark.timeout(900)
def test_every_walkthrough_prints_what_the_docs_show(
    make_run: tuple[subprocess.Popen[str], dict[str, str]], tmp_path: Path
) -> None:
    process, env = make_run
    steps = [step for page in site_pages(ROOT) for step in walkthrough_steps(page.read_text())]
    assert len(steps) > 20, "the ```console walkthroughs of the README and the docs were not found"
    started = read_until(process, SERVING, timeout=300)
    assert any("demo purge SUCCEEDED" in line for line in started), started
    workdir = tmp_path / "shell"
    workdir.mkdir()
    # The commands name .venv/bin/...: relative to the repository, files they write land here.
    (workdir / ".venv").symlink_to(Path(sys.executable).parent.parent)
    for step in steps:
        actual = run_step(step, env, workdir)
        assert output_matches(step.expected, actual), (
            f"$ {step.command}\nthe docs show:\n"
            + "\n".join(step.expected)
            + "\nprinted:\n"
            + "\n".join(actual)
        )

    stopping = time.monotonic()
    said = ctrl_c(process)
    print(f"\nCtrl-C: {time.monotonic() - stopping:.1f} s to exit; {said}")

    # A warm start on the state the first run left: a second `make run` works as the first did.
    again = start_make_run(env)
    try:
        starting = time.monotonic()
        started = read_until(again, SERVING, timeout=300)
        ready = next(line for line in started if line.startswith("ready in"))
        assert any(line.startswith("warm start: the demo purges ran on") for line in started), started
        print(f"warm start: {ready}, serving after {time.monotonic() - starting:.1f} s")
    finally:
        if again.poll() is None:
            ctrl_c(again)
