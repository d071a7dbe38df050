"""What a process's threads cost the kernel while a benchmark ran: user and system CPU and context
switches summed over every thread sampled (a thread that ends keeps its last sample), read from
/proc/PID/task. A process whose threads hand work to each other, or take turns at the GIL, pays
for it in system CPU and switches that a Python profiler doesn't see."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path

from bench.periodic_sampling import sampled

_TICKS = os.sysconf("SC_CLK_TCK")
# Fields of /proc/PID/task/TID/stat after the command's closing parenthesis: utime, stime.
_USER, _SYSTEM = 11, 12


@dataclass(frozen=True)
class ThreadTimes:
    user: float
    system: float
    switches: int


def _thread_times(task: Path) -> ThreadTimes:
    fields = (task / "stat").read_text().rsplit(")", 1)[1].split()
    switches = 0
    for line in (task / "status").read_text().splitlines():
        if line.startswith(("voluntary_ctxt_switches:", "nonvoluntary_ctxt_switches:")):
            switches += int(line.split()[1])
    return ThreadTimes(int(fields[_USER]) / _TICKS, int(fields[_SYSTEM]) / _TICKS, switches)


@dataclass
class ThreadSwitches:
    """The sampled processes' threads, by (pid, tid): first and last sample."""

    pids: list[int]
    first: dict[tuple[int, int], ThreadTimes] = field(default_factory=dict)
    last: dict[tuple[int, int], ThreadTimes] = field(default_factory=dict)

    def sample(self) -> None:
        baseline = not self.last
        for pid in self.pids:
            with suppress(FileNotFoundError):
                for task in Path(f"/proc/{pid}/task").iterdir():
                    # A thread that ended since the listing keeps its last sample.
                    with suppress(FileNotFoundError, ProcessLookupError):
                        key = (pid, int(task.name))
                        times = _thread_times(task)
                        self.first.setdefault(key, times if baseline else ThreadTimes(0.0, 0.0, 0))
                        self.last[key] = times

    def line(self, units: int, unit: str) -> str:
        """Per `unit` (a table): user and system ms, context switches; and the threads seen."""
        user = sum(times.user - self.first[key].user for key, times in self.last.items())
        system = sum(times.system - self.first[key].system for key, times in self.last.items())
        switches = sum(times.switches - self.first[key].switches for key, times in self.last.items())
        per = max(units, 1)
        return (
            f"worker threads per {unit}: user {user / per * 1000:.1f} ms, "
            f"system {system / per * 1000:.1f} ms, context switches {switches / per:,.0f}; "
            f"{len(self.last)} threads seen"
        )


@asynccontextmanager
async def thread_switches(pids: list[int]) -> AsyncIterator[ThreadSwitches]:
    """Samples the processes' threads until the block ends."""
    switches = ThreadSwitches(pids)
    async with sampled(switches.sample):
        yield switches
