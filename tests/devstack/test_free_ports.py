"""A test or bench stack's ports: outside the kernel's ephemeral range, where no outgoing
connection can take one between its choice and the service's bind, and never the same port for
two processes choosing at once (pytest-xdist's workers start their stacks together)."""

from __future__ import annotations

import json
import subprocess
import sys

from icepurge.devstack.free_ports import ephemeral_range, free_port_block, free_ports

CHOOSE_AND_HOLD = (
    "import json, sys\n"
    "from icepurge.devstack.free_ports import free_ports\n"
    "print(json.dumps(free_ports(int(sys.argv[1]))), flush=True)\n"
    "sys.stdin.read()\n"
)


def test_ports_are_outside_the_ephemeral_range_and_make_runs_ports() -> None:
    low, high = ephemeral_range()
    chosen = free_ports(200)
    assert len(set(chosen)) == 200
    assert not [port for port in chosen if low <= port <= high or 17_300 <= port <= 17_310]
    base = free_port_block(15)
    assert not [port for port in range(base, base + 15) if low <= port <= high or port in chosen]


def test_two_processes_choosing_at_once_never_share_a_port() -> None:
    """Each holds its ports (as a stack's process does) while the other chooses."""
    processes = [
        subprocess.Popen(
            [sys.executable, "-c", CHOOSE_AND_HOLD, "2000"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    try:
        chosen = [set(json.loads(process.stdout.readline())) for process in processes if process.stdout]
    finally:
        for process in processes:
            process.communicate("", timeout=30)
    assert [len(ports) for ports in chosen] == [2000, 2000]
    assert not chosen[0] & chosen[1]
