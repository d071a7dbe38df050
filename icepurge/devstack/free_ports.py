"""Ports for a test or bench stack's services: free now, outside the kernel's ephemeral range, and
reserved for the life of this process against every other process choosing this way.

A port is chosen before the service that binds it starts, seconds later. Inside the ephemeral
range any outgoing connection may take it meanwhile (a stack that just built tables over
thousands of S3 connections lost its API port so, twice in five starts); outside it only a
listener can, and two processes choosing at once (pytest-xdist's workers start their stacks
together) are kept apart by a lock file per port, held until the process ends."""

from __future__ import annotations

import fcntl
import os
import random
import socket
import tempfile
from pathlib import Path

_EPHEMERAL_RANGE = Path("/proc/sys/net/ipv4/ip_local_port_range")
# Linux's own default, where the range can't be read.
_DEFAULT_EPHEMERAL = (32768, 60999)
LOWEST, HIGHEST = 10_000, 65_535
# `make run`'s well-known ports past LOWEST (StackPorts.defaults: 17300 and the ten after it).
_MAKE_RUN_BLOCK = range(17_300, 17_311)
_LOCKS = Path(tempfile.gettempdir()) / "icepurge-ports"
# Port -> its lock file, open (and so locked) until this process ends.
_held: dict[int, int] = {}


class NoFreePortsError(RuntimeError):
    """No run of free ports outside the ephemeral range: the message says which range was read."""


def ephemeral_range() -> tuple[int, int]:
    try:
        low, high = (int(part) for part in _EPHEMERAL_RANGE.read_text().split())
    except (OSError, ValueError):
        return _DEFAULT_EPHEMERAL
    return low, high


def _choosable(port: int, ephemeral: tuple[int, int]) -> bool:
    low, high = ephemeral
    return not low <= port <= high and port not in _MAKE_RUN_BLOCK and port not in _held


def _reserve(port: int) -> bool:
    """Locks the port's file for this process; False when another process holds it."""
    _LOCKS.mkdir(mode=0o777, exist_ok=True)
    descriptor = os.open(_LOCKS / f"{port}.lock", os.O_CREAT | os.O_RDWR, 0o666)
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(descriptor)
        return False
    _held[port] = descriptor
    return True


def _release(port: int) -> None:
    os.close(_held.pop(port))


def _bindable(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def _take(port: int) -> bool:
    if not _reserve(port):
        return False
    if _bindable(port):
        return True
    _release(port)
    return False


def free_ports(count: int) -> list[int]:
    """`count` distinct ports, each reserved for this process."""
    ephemeral = ephemeral_range()
    candidates = [port for port in range(LOWEST, HIGHEST + 1) if _choosable(port, ephemeral)]
    random.shuffle(candidates)
    chosen: list[int] = []
    for port in candidates:
        if len(chosen) == count:
            break
        if _take(port):
            chosen.append(port)
    if len(chosen) < count:
        for port in chosen:
            _release(port)
        raise NoFreePortsError(
            f"fewer than {count} free ports in {LOWEST}-{HIGHEST} outside the ephemeral range "
            f"{ephemeral[0]}-{ephemeral[1]} ({_EPHEMERAL_RANGE})"
        )
    return chosen


def free_port_block(size: int) -> int:
    """The first of `size` consecutive ports, each reserved for this process (for a stack whose
    ports are a base and offsets from it)."""
    ephemeral = ephemeral_range()
    bases = [base for base in range(LOWEST, HIGHEST - size + 2, size)]
    random.shuffle(bases)
    for base in bases:
        block = range(base, base + size)
        if not all(_choosable(port, ephemeral) for port in block):
            continue
        taken = []
        for port in block:
            if not _take(port):
                break
            taken.append(port)
        if len(taken) == size:
            return base
        for port in taken:
            _release(port)
    raise NoFreePortsError(
        f"no {size} consecutive free ports in {LOWEST}-{HIGHEST} outside the ephemeral range "
        f"{ephemeral[0]}-{ephemeral[1]} ({_EPHEMERAL_RANGE})"
    )
