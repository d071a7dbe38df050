"""Keeps a purge's status current as steps finish: counters, failure sample, rate and ETA."""

from __future__ import annotations

from datetime import datetime

from workflows.constants import FAILURE_SAMPLE_SIZE
from workflows.counts import FileCounts
from workflows.status import FileFailure, PurgeState, PurgeStatus
from workflows.steps import PlanSummary


class Progress:
    def __init__(self, status: PurgeStatus) -> None:
        self.status = status

    def move_to(self, state: PurgeState, now: datetime) -> None:
        self.status.state = state
        self.status.updated_at = now
        if state in (
            PurgeState.SUCCEEDED,
            PurgeState.SUCCEEDED_WITH_ERRORS,
            PurgeState.FAILED,
            PurgeState.CANCELLED,
        ):
            self.status.finished_at = now
            self.status.eta_seconds = 0.0 if state is not PurgeState.FAILED else None

    def planned(self, plan: PlanSummary, now: datetime) -> None:
        self.status.planned = plan.planned
        self.status.engine = plan.engine.value
        self.status.gc_enabled = plan.gc_enabled
        self.status.chunks_total = plan.chunk_count
        self.status.files_total = plan.planned.files
        self._count(plan.planning_counts, [], 0, now)

    def chunk_done(
        self, counts: FileCounts, failures: list[FileFailure], failures_total: int, now: datetime
    ) -> None:
        self.status.chunks_done += 1
        self._count(counts, failures, failures_total, now)

    def finalized(
        self, counts: FileCounts, failures: list[FileFailure], failures_total: int, now: datetime
    ) -> None:
        self._count(counts, failures, failures_total, now)

    def failed(self, reason: str, now: datetime) -> None:
        self.status.last_error = reason
        self.move_to(PurgeState.FAILED, now)

    def _count(
        self, counts: FileCounts, failures: list[FileFailure], failures_total: int, now: datetime
    ) -> None:
        status = self.status
        status.counts.add(counts)
        status.failures_total += failures_total
        room = FAILURE_SAMPLE_SIZE - len(status.failure_sample)
        status.failure_sample.extend(failures[: max(room, 0)])
        if failures:
            status.last_error = failures[-1].error
        status.files_done = status.counts.total().done
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
