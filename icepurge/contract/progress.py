"""A purge's status changes only here, through named transitions: counters, failure sample,
rate and ETA, guards, the catalog's steps, controls. Each says once how it is published: to the
search attributes and the Web UI's details (a state change, a finished step), to the details only
(a control, a guard, a retry), or not at all (the next state change carries it)."""

from __future__ import annotations

from datetime import datetime
from typing import Protocol

from icepurge.contract.counts import FileCounts
from icepurge.contract.identity import identity_of
from icepurge.contract.names import FAILURE_SAMPLE_SIZE
from icepurge.contract.reasons import already_gone_note
from icepurge.contract.request import PurgeRequest
from icepurge.contract.states import TERMINAL_STATES, PurgeState
from icepurge.contract.status import FileFailure, GuardOutcome, PurgeReport, PurgeStatus, RetryingStep
from icepurge.contract.steps import ChunkResult, FinalizeResult, PlanSummary
from icepurge.contract.sweep_steps import SweepOutcome


def pending_status(purge_id: str, request: PurgeRequest, now: datetime) -> PurgeStatus:
    """A purge's status before its first step."""
    return PurgeStatus(
        **identity_of(request),
        purge_id=purge_id,
        state=PurgeState.PENDING,
        table=request.table,
        metadata_location=request.metadata_location,
        dry_run=request.options.dry_run,
        by_name=request.by_name,
        engine=request.options.engine.value,
        bucket_requests_per_second=request.options.bucket_requests_per_second,
        started_at=now,
        updated_at=now,
    )


def report_at(status: PurgeStatus, now: datetime) -> PurgeReport:
    started = status.started_at or now
    return PurgeReport(status=status, duration_seconds=(now - started).total_seconds())


class Publisher(Protocol):
    def changed(self, status: PurgeStatus) -> None:
        """Search attributes and details: state changes, finished chunks and finalize."""

    def details(self, status: PurgeStatus) -> None:
        """The Web UI's details only."""

    def waiting(self, status: PurgeStatus) -> None:
        """What the purge waits for (status.retrying), where listings read it; cleared when None."""

    def scheduled(self, status: PurgeStatus) -> None:
        """The soft-delete window's due time, as a search attribute."""


class Progress:
    def __init__(self, status: PurgeStatus, publisher: Publisher) -> None:
        self.status = status
        self._publisher = publisher
        # Counts of finished steps; status.counts adds the running chunks' latest signals.
        self._settled = status.counts.model_copy(deep=True)
        self._running: dict[int, FileCounts] = {}

    def next_run(self) -> None:
        self.status.run_count += 1

    def retrying(self, step: str, attempt: int, error: str) -> None:
        self.status.retrying = RetryingStep(step=step, attempt=attempt, last_error=error)
        self._publisher.details(self.status)
        self._publisher.waiting(self.status)

    def settled(self, step: str) -> None:
        """A step that succeeded is no longer retrying."""
        if self.status.retrying is not None and self.status.retrying.step == step:
            self._stop_waiting()

    def _stop_waiting(self) -> None:
        self.status.retrying = None
        self._publisher.waiting(self.status)

    def paused(self, paused: bool, publish: bool = True) -> None:
        self.status.paused = paused
        if publish:
            self._publisher.details(self.status)

    def budget(self, requests_per_second: float | None) -> None:
        self.status.bucket_requests_per_second = requests_per_second
        self._publisher.details(self.status)

    def namespace_control(self, paused: bool, requests_per_second: float | None) -> tuple[bool, bool]:
        """The namespace purge's pause and budget share: (budget changed, pause began)."""
        status = self.status
        budget_changed = requests_per_second != status.bucket_requests_per_second
        pause_began = paused and not status.paused
        status.bucket_requests_per_second = requests_per_second
        status.paused = paused
        self._publisher.details(status)
        return budget_changed, pause_began

    def loaded(self, protection: GuardOutcome, metadata_location: str) -> None:
        self.status.guards.append(protection)
        self.status.metadata_location = metadata_location

    def dropped(self, now: datetime, storage_gone: bool) -> None:
        """A held table's purge counts it dropped from its hold, when its identifier came free."""
        if self.status.dropped_at is None:
            self.status.dropped_at = now
        if storage_gone:
            self.status.storage_deleted_by_catalog = True

    def held(self, now: datetime, held_as: str) -> None:
        self.status.held_as = held_as
        self.status.dropped_at = now
        self._publisher.details(self.status)

    def guarded(self, outcome: GuardOutcome, publish: bool = True) -> None:
        self.status.guards.append(outcome)
        if publish:
            self._publisher.details(self.status)

    def scheduled(self, due: datetime, now: datetime) -> None:
        self.status.scheduled_for = due
        self._publisher.scheduled(self.status)
        self.move_to(PurgeState.SCHEDULED, now)

    def undropped(self, note: str | None, now: datetime) -> None:
        self.status.undropped_note = note
        self.move_to(PurgeState.UNDROPPED, now)

    def chunks_announced(self, chunks: int) -> None:
        self.status.chunks_total = max(self.status.chunks_total, chunks)

    def reported(self, location: str) -> None:
        self.status.report_location = location

    def swept(self, outcome: SweepOutcome) -> None:
        self.status.sweep = outcome

    def move_to(self, state: PurgeState, now: datetime) -> None:
        self.status.state = state
        self.status.moved(now, closes=state in TERMINAL_STATES, failed=state is PurgeState.FAILED)
        if state in TERMINAL_STATES:
            if not self.status.dry_run:
                self.status.outcome_note = already_gone_note(
                    self.status.counts.total().already_missing, self.status.storage_deleted_by_catalog
                )
            # A closed purge waits for nothing: its reason is last_error, not a retry's.
            if self.status.retrying is not None:
                self._stop_waiting()
        self._publisher.changed(self.status)

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
        self._publisher.changed(status)

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
