"""Keeps a purge's status current as steps finish: counters, failure sample, rate and ETA."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from icepurge.contract.counts import FileCounts
from icepurge.contract.names import FAILURE_SAMPLE_SIZE
from icepurge.contract.status import TERMINAL_STATES, FileFailure, PurgeState, PurgeStatus
from icepurge.contract.steps import ChunkResult, FinalizeResult, PlanSummary


class Progress:
    def __init__(self, status: PurgeStatus, on_change: Callable[[PurgeStatus], None]) -> None:
        """`on_change` hears of state changes and of finished chunks and finalize, not of
        in-chunk progress."""
        self.status = status
        self._on_change = on_change
        # Counts of finished steps; status.counts adds the running chunks' latest signals.
        self._settled = status.counts.model_copy(deep=True)
        self._running: dict[int, FileCounts] = {}

    def move_to(self, state: PurgeState, now: datetime) -> None:
        self.status.state = state
        self.status.updated_at = now
        if state in TERMINAL_STATES:
            self.status.finished_at = now
            self.status.eta_seconds = 0.0 if state is not PurgeState.FAILED else None
        self._on_change(self.status)

    def planned(self, plan: PlanSummary, now: datetime) -> None:
        """Not published by itself: the move to DELETING follows at once."""
        self.status.planned = plan.planned
        self.status.engine = plan.engine.value
        self.status.gc_enabled = plan.gc_enabled
        self.status.unreadable_files = plan.unreadable_files
        self.status.chunks_total = plan.chunk_count
        self.status.files_total = plan.planned.files
        self._count(plan.planning_counts, [], 0, now)

    def chunk_started(self, index: int) -> None:
        """A chunk restarted after a pause keeps its counts: it resumes from its checkpoint."""
        self._running.setdefault(index, FileCounts())

    def chunk_progress(self, index: int, counts: FileCounts, now: datetime) -> None:
        """A late signal (its chunk already finished) or one overtaken by a newer one is
        ignored: a chunk's counts only grow."""
        running = self._running.get(index)
        if running is not None and counts.total().done >= running.total().done:
            self._running[index] = counts
            self._refresh(now)

    def chunk_done(self, result: ChunkResult, now: datetime) -> None:
        self._running.pop(result.chunk_index, None)
        self.status.chunks_done += 1
        self._settle(result, now)

    def finalized(self, result: FinalizeResult, now: datetime) -> None:
        self._settle(result, now)

    def failed(self, reason: str, error_type: str | None, now: datetime) -> None:
        self.status.last_error = reason
        self.status.error_type = error_type
        self.move_to(PurgeState.FAILED, now)

    def _settle(self, result: ChunkResult | FinalizeResult, now: datetime) -> None:
        status = self.status
        status.delete_requests += result.delete_requests
        status.throttled_requests += result.throttled_requests
        self._count(result.counts, result.failure_sample, result.failures_total, now)
        self._on_change(status)

    def _count(
        self, counts: FileCounts, failures: list[FileFailure], failures_total: int, now: datetime
    ) -> None:
        status = self.status
        self._settled.add(counts)
        status.failures_total += failures_total
        room = FAILURE_SAMPLE_SIZE - len(status.failure_sample)
        status.failure_sample.extend(failures[: max(room, 0)])
        if failures:
            status.last_error = failures[-1].error
        self._refresh(now)

    def _refresh(self, now: datetime) -> None:
        status = self.status
        counts = self._settled.model_copy(deep=True)
        for running in self._running.values():
            counts.add(running)
        status.counts = counts
        status.files_done = counts.total().done
        # Estimates from manifest-list counts can be exceeded (dedup, history sweep).
        status.files_total = max(status.files_total, status.files_done)
        status.updated_at = now
        self._estimate(now)

    def _estimate(self, now: datetime) -> None:
        status = self.status
        if status.started_at is None:
            return
        elapsed = (now - status.started_at).total_seconds()
        if elapsed <= 0 or status.files_done == 0:
            return
        rate = status.files_done / elapsed
        status.rate_files_per_second = round(rate, 2)
        status.eta_seconds = round((status.files_total - status.files_done) / rate, 1)
