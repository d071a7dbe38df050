"""How fast the host runs, for a long benchmark's lines: the CPU a fixed piece of pure-Python work
takes, probed every few seconds on a thread of this process, and the share of the machine's time
the hypervisor stole. Both see a host that runs slower clocks or steals cores. Neither sees a
tight loop's blind spots, such as caches and memory shared with other tenants: on these machines
every process's CPU a table swung by up to 77 % within a purge while the probe held ("10^5 with
a baseline of its own size, a third run" in BENCHMARKS.md), so read it as a check, not a
correction."""

from __future__ import annotations

import asyncio
import statistics
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

import psutil

# About 45 ms of one core at full pace on these machines, every PROBE_SECONDS: ~1 % of a core.
PROBE_ITERATIONS = 1_000_000
PROBE_SECONDS = 5.0


def _probe_ms() -> float:
    # The thread's own CPU: the probe runs beside the bench's other threads.
    started = time.thread_time()
    total = 0
    for value in range(PROBE_ITERATIONS):
        total += value * value % 7
    assert total >= 0
    return (time.thread_time() - started) * 1000


def _times() -> tuple[float, float]:
    """The machine's CPU seconds so far, all of them and those stolen (0 where the kernel has no
    steal time)."""
    now = psutil.cpu_times()
    return sum(now), getattr(now, "steal", 0.0)


@dataclass(frozen=True)
class PaceMark:
    """Where a span starts: the probes taken so far and the machine's CPU times."""

    probes: int
    times: tuple[float, float]


@dataclass
class HostPace:
    probes: list[float] = field(default_factory=list)

    def mark(self) -> PaceMark:
        return PaceMark(len(self.probes), _times())

    def reading(self, since: PaceMark) -> str:
        """The probes' median since the mark (one taken now if none was) and the share stolen."""
        probes = self.probes[since.probes :] or [_probe_ms()]
        now = _times()
        elapsed, stolen = now[0] - since.times[0], now[1] - since.times[1]
        share = stolen / elapsed * 100 if elapsed > 0 else 0.0
        return (
            f"host: probe {statistics.median(probes):.0f} ms of CPU (median of {len(probes)}), "
            f"{share:.1f} % stolen"
        )


@asynccontextmanager
async def host_pace() -> AsyncIterator[HostPace]:
    """Probes every PROBE_SECONDS while the block runs."""
    pace = HostPace()

    async def keep_probing() -> None:
        while True:
            pace.probes.append(await asyncio.to_thread(_probe_ms))
            await asyncio.sleep(PROBE_SECONDS)

    prober = asyncio.create_task(keep_probing())
    try:
        yield pace
    finally:
        prober.cancel()
