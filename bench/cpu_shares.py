"""Which process took the machine's CPU while a benchmark ran: this process and every process it
started (services, workers, load generators), sampled while they live (a process that exits
keeps its last sample), grouped by role."""

from __future__ import annotations

import os
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

import psutil

from bench.periodic_sampling import sampled

# Whichever matches a command line first names the process's role.
ROLES = (
    ("locust", "load clients (Locust)"),
    ("icepurge.api.cli.main worker", "icepurge worker"),
    ("icepurge.api.cli.main api", "icepurge API"),
    ("temporal", "Temporal dev server"),
    ("weed", "SeaweedFS"),
)


@dataclass
class CpuShares:
    """CPU seconds by role over the sampled span."""

    started: float = field(default_factory=time.monotonic)
    ended: float = 0.0
    first: dict[int, float] = field(default_factory=dict)
    last: dict[int, float] = field(default_factory=dict)
    roles: dict[int, str] = field(default_factory=dict)

    def sample(self) -> None:
        me = psutil.Process()
        # Processes alive at the first sample count from there; later ones from their birth.
        baseline = not self.last
        for process in [me, *me.children(recursive=True)]:
            try:
                times = process.cpu_times()
                command = " ".join(process.cmdline())
            except psutil.Error:
                continue
            used = times.user + times.system
            self.first.setdefault(process.pid, used if baseline else 0.0)
            self.last[process.pid] = used
            self.roles.setdefault(process.pid, _role(process.pid, me.pid, command))

    def seconds_by_role(self) -> dict[str, float]:
        """CPU seconds each role took from the first sample to the latest."""
        by_role: dict[str, float] = {}
        for pid, used in self.last.items():
            by_role[self.roles[pid]] = by_role.get(self.roles[pid], 0.0) + used - self.first[pid]
        return by_role

    def per_item_line(self, items: int, *, item: str, since: dict[str, float] | None = None) -> str:
        """`role N.N` ms of CPU an item (a table, a file) since an earlier `seconds_by_role`."""
        before = since or {}
        spent = {role: used - before.get(role, 0.0) for role, used in self.seconds_by_role().items()}
        listed = ", ".join(
            f"{role} {seconds / max(items, 1) * 1000:.1f}"
            for role, seconds in sorted(spent.items(), key=lambda item: item[1], reverse=True)
        )
        return f"CPU ms a {item}: {listed}"

    def line(self) -> str:
        """`role NN %` of one core, largest first, and the machine's cores for scale."""
        wall = max((self.ended or time.monotonic()) - self.started, 1e-9)
        shares = sorted(self.seconds_by_role().items(), key=lambda item: item[1], reverse=True)
        listed = ", ".join(f"{role} {seconds / wall * 100:.0f} %" for role, seconds in shares)
        return f"CPU over {wall:.0f} s, % of one core ({os.cpu_count()} cores): {listed}"


def _role(pid: int, own: int, command: str) -> str:
    for key, role in ROLES:
        if key in command:
            return role
    return "this process (bench, in-process API)" if pid == own else "other"


@asynccontextmanager
async def cpu_shares() -> AsyncIterator[CpuShares]:
    """Samples until the block ends; the shares cover the block."""
    shares = CpuShares()
    try:
        async with sampled(shares.sample):
            yield shares
    finally:
        shares.ended = time.monotonic()
