"""The embedded stack's service processes cache their bytecode whatever the shell says: a worker's
sandbox imports the workflow modules again for every new workflow, and without cached bytecode
compiles them from source each time. A service that fails says why in its error."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest

from icepurge.devstack.process import ServiceFailedError, ServiceProcess, stop_together


def test_a_service_caches_its_bytecode_when_the_shell_says_not_to(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")
    monkeypatch.setenv("ICEPURGE_PASSED_ON", "kept")
    log = tmp_path / "service.log"
    script = "import os, sys; print(sys.dont_write_bytecode, os.environ['ICEPURGE_PASSED_ON'])"
    service = ServiceProcess("bytecode", [sys.executable, "-c", script], log)
    service.start()
    for _ in range(600):
        if not service.running():
            break
        time.sleep(0.05)
    assert log.read_text().split() == ["False", "kept"]


def test_a_service_with_a_grace_of_its_own_is_not_waited_for_past_it(tmp_path: Path) -> None:
    """weed's graceful stop takes 25 s whatever the stack's grace: Ctrl-C of `make run` waited the
    whole grace for it. A service that ignores SIGTERM is killed after its own grace; one that
    stops at once beside it is not killed."""
    stubborn = ServiceProcess(
        "stubborn",
        ["bash", "-c", "trap '' TERM; while true; do sleep 0.1; done"],
        tmp_path / "stubborn.log",
        stop_grace=0.3,
    )
    prompt = ServiceProcess("prompt", ["sleep", "60"], tmp_path / "prompt.log")
    for service in (stubborn, prompt):
        service.start()
    time.sleep(0.3)
    began = time.monotonic()
    stop_together([stubborn, prompt], grace=30)
    assert time.monotonic() - began < 10
    assert not stubborn.running() and not prompt.running()


def test_a_service_that_exits_early_says_why_in_the_error(tmp_path: Path) -> None:
    """A CI run keeps its output, not its temporary files: the error quotes the log's end."""
    script = "import sys; print('\\n'.join(f'line {n}' for n in range(30))); sys.exit('bind: address in use')"
    service = ServiceProcess("early", [sys.executable, "-c", script], tmp_path / "early.log")
    service.start()
    with pytest.raises(ServiceFailedError) as failed:
        service.wait_for_port(1, timeout=60)
    message = str(failed.value)
    assert message.startswith(f"early exited early; see {tmp_path / 'early.log'}, which ends:")
    assert "bind: address in use" in message and "line 29" in message and "line 9\n" not in message
