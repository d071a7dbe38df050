"""Baselines paired with a long namespace purge, minutes apart at most: the long purge is read for a
minute, paused, a small namespace purge of the same shape runs alone on the same worker, stack
and store, and the long purge resumes. K such pairs spread over the long purge.

Why: on these machines two equal 1,000-table purges minutes apart ran up to 1.49x apart, and every
process's CPU a table swung by up to 77 % within an hour ("The same 1,000 tables, the same stack,
two minutes apart" in BENCHMARKS.md), so a baseline read before a 90-minute run, or after it, says
more about the host's hour than about the purge's size. A pair's two readings share the host's
pace of the same few minutes.

What each pair compares: the long purge's tables/min over the minute before its pause, against
the small purge's tables/min over its whole run (its start and its last batches included, so a
pair leans towards the long purge by those few seconds). The long purge's own whole rate leaves
out the time it stood paused, from the moment its tables stopped finishing (as the status showed
it: a tree's ranges tell their tallies every few seconds, so a pause may read up to that much
short, which counts against the long purge) to its resume."""

from __future__ import annotations

import asyncio
import statistics
import time
from collections.abc import Awaitable, Callable
from contextlib import suppress
from dataclasses import dataclass, field

from bench.cpu_shares import CpuShares
from icepurge.api.clients.errors import PurgeControlRejectedError
from icepurge.api.clients.temporal_client import PurgeClient

Namespace = tuple[str, ...]
# The long purge's reading before each pause.
READING_SECONDS = 60.0
# Paused, the long purge counts as quiet once its finished tables held this long with none running:
# longer than a range's interval between its tallies (RANGE_PROGRESS_SECONDS, 5 s).
QUIET_SECONDS = 7.0
POLL_SECONDS = 1.0
QUIET_AT_MOST_SECONDS = 300.0


@dataclass(frozen=True)
class Pair:
    at_tables: int
    long_rate: float
    baseline_rate: float

    @property
    def ratio(self) -> float:
        return self.long_rate / self.baseline_rate


@dataclass
class PairedBaselines:
    """`start_baseline` starts the namespace purge of a baseline namespace and returns its id."""

    namespaces: list[Namespace]
    start_baseline: Callable[[Namespace], Awaitable[str]]
    pairs: list[Pair] = field(default_factory=list)
    paused_seconds: float = 0.0

    def due(self, done: int, total: int) -> bool:
        """The next pair comes once the long purge is past the next of K+1 equal parts."""
        taken = len(self.pairs)
        return taken < len(self.namespaces) and done * (len(self.namespaces) + 1) >= total * (taken + 1)

    async def pair(self, purges: PurgeClient, purge_id: str, shares: CpuShares) -> None:
        namespace = self.namespaces[len(self.pairs)]
        before, started, spent = (
            (await purges.namespaces.status(purge_id)).tables_done,
            time.perf_counter(),
            (shares.seconds_by_role()),
        )
        await asyncio.sleep(READING_SECONDS)
        after = (await purges.namespaces.status(purge_id)).tables_done
        long_rate = (after - before) / (time.perf_counter() - started) * 60
        long_cpu = shares.per_item_line(after - before, item="table", since=spent)
        try:
            await purges.namespaces.pause(purge_id)
        except PurgeControlRejectedError:
            self.namespaces.remove(namespace)
            print(f"  no pair at {after:,} tables: the long purge ended during its reading", flush=True)
            return
        quiet_at = await _quiet(purges, purge_id)
        spent, started = shares.seconds_by_role(), time.perf_counter()
        baseline_id = await self.start_baseline(namespace)
        report = await purges.namespaces.wait(baseline_id)
        seconds = time.perf_counter() - started
        done = report.status.tables_done
        # The long purge's last tables may have finished as it paused: it has ended then.
        with suppress(PurgeControlRejectedError):
            await purges.namespaces.resume(purge_id)
        self.paused_seconds += time.perf_counter() - quiet_at
        pair = Pair(after, long_rate, done / seconds * 60)
        self.pairs.append(pair)
        print(
            f"  pair {len(self.pairs)} at {after:,} tables: the long purge {long_rate:,.0f} tables/min over "
            f"the last {READING_SECONDS:.0f} s ({long_cpu}); {'.'.join(namespace)} "
            f"{report.status.state.value}, {done:,} tables, {pair.baseline_rate:,.0f} tables/min "
            f"({shares.per_item_line(done, item='table', since=spent)}); {pair.ratio:.2f}x",
            flush=True,
        )

    def summary(self, long_rate: float) -> list[str]:
        """The long purge's whole rate (pauses left out) against the pairs' baselines."""
        if not self.pairs:
            return ["no pair was taken: the long purge ended first"]
        ratios = [pair.ratio for pair in self.pairs]
        baselines = [pair.baseline_rate for pair in self.pairs]
        middle = statistics.median(baselines)
        return [
            f"pairs: {len(self.pairs)}, each the long purge's minute over its baseline: "
            + ", ".join(f"{ratio:.2f}x" for ratio in ratios)
            + f" (median {statistics.median(ratios):.2f}x)",
            f"the long purge's whole rate, {self.paused_seconds:.0f} s of pauses left out: {long_rate:,.0f} "
            f"tables/min, {long_rate / middle:.2f}x the baselines' median ({middle:,.0f}; "
            f"{min(baselines):,.0f}-{max(baselines):,.0f})",
        ]


async def _quiet(purges: PurgeClient, purge_id: str) -> float:
    """When the paused purge's tables last finished (perf_counter), once none ran for QUIET_SECONDS."""
    status = await purges.namespaces.status(purge_id)
    done, changed, deadline = (
        status.tables_done,
        time.perf_counter(),
        time.perf_counter() + QUIET_AT_MOST_SECONDS,
    )
    while status.tables_running or time.perf_counter() - changed < QUIET_SECONDS:
        assert time.perf_counter() < deadline, (
            f"{purge_id} still ran tables {QUIET_AT_MOST_SECONDS:.0f} s paused"
        )
        await asyncio.sleep(POLL_SECONDS)
        status = await purges.namespaces.status(purge_id)
        if status.tables_done != done:
            done, changed = status.tables_done, time.perf_counter()
    return changed
