"""Keeps a namespace purge's status current: table purges started and finished, the running
ones' latest counts (from the events they signal), its ranges' tallies (from the progress they
signal, then their reports), rate and ETA."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from temporalio import workflow

from icepurge.contract.events import PurgeEvent
from icepurge.contract.identity import identity_of
from icepurge.contract.names import FAILURE_SAMPLE_SIZE
from icepurge.contract.namespace_request import NamespacePurgeRequest
from icepurge.contract.namespace_status import (
    NAMESPACE_TERMINAL_STATES,
    FileTotals,
    NamespacePurgeState,
    NamespacePurgeStatus,
    RunningTable,
    SkippedEntry,
)
from icepurge.contract.namespace_steps import DropNamespacesResult, EnumerationSummary
from icepurge.contract.range_steps import RangeProgress
from icepurge.contract.table_outcomes import TableEnd, TableOutcome, TableTallies


def files_of_event(event: PurgeEvent) -> FileTotals:
    return FileTotals(
        planned=event.files_total,
        done=event.files_done,
        deleted=event.files_deleted,
        failed=event.files_failed,
        bytes_deleted=event.bytes_deleted,
    )


class NamespaceProgress:
    """The namespace purge's status changes only here; `publish` (search attributes and details)
    runs once per state change, and when the workflow asks (a table purge finished)."""

    def __init__(self, status: NamespacePurgeStatus, publish: Callable[[NamespacePurgeStatus], None]) -> None:
        self.status = status
        self._publish = publish
        # Finished table purges' files; status.files adds the running ones' latest.
        self._settled = status.files.model_copy()
        self._running: dict[str, RunningTable] = {}
        # Tables inside running batches: counted, never listed (they have no workflow).
        self._batched = 0
        # Running ranges' latest progress; the status's table counts include it (`_live`).
        self._ranges: dict[int, RangeProgress] = {}
        self._live = TableTallies()

    def publish(self) -> None:
        self._publish(self.status)

    def next_run(self) -> None:
        self.status.run_count += 1

    def move_to(self, state: NamespacePurgeState, now: datetime) -> None:
        self.status.state = state
        self.status.moved(
            now, closes=state in NAMESPACE_TERMINAL_STATES, failed=state is NamespacePurgeState.FAILED
        )
        self.publish()

    def failed(self, reason: str, error_type: str | None, now: datetime) -> None:
        self.status.last_error = reason
        self.status.error_type = error_type
        self.move_to(NamespacePurgeState.FAILED, now)

    def paused(self, paused: bool) -> None:
        self.status.paused = paused

    def budget(self, requests_per_second: float | None) -> None:
        self.status.bucket_requests_per_second = requests_per_second

    def enumerated(self, tree: EnumerationSummary) -> None:
        status = self.status
        status.tree_location = tree.tree_location
        status.tables_total = tree.tables_total
        status.namespaces_total = tree.namespaces_total
        status.entries_skipped = tree.entries_skipped
        status.tables_unselected = tree.tables_unselected
        for entry in tree.skipped_sample:
            self.skip(entry)

    def namespaces_dropped(self, result: DropNamespacesResult) -> None:
        self.status.namespaces_dropped = result.dropped
        self.status.entries_skipped += result.kept_total
        for entry in result.kept_sample:
            self.skip(entry)

    def started(self, purge_id: str, table: str, now: datetime) -> None:
        self._running[purge_id] = RunningTable(table=table, purge_id=purge_id)
        self._refresh(now)

    def event(self, event: PurgeEvent, now: datetime) -> None:
        """An event of a finished or unknown table purge changes nothing: its end is counted."""
        running = self._running.get(event.purge_id)
        if running is not None and event.files_done >= running.files.done:
            running.state = event.state.value
            running.files = files_of_event(event)
            self._refresh(now)

    def finished(self, purge_id: str, outcome: TableOutcome, now: datetime) -> None:
        """Without `files` (a failed or cancelled purge has no report), its latest event's stand."""
        end, failure = outcome.end, outcome.failure
        running = self._running.pop(purge_id, None)
        self._settled.add(outcome.files or (running.files if running else FileTotals()))
        status = self.status
        if end is TableEnd.DONE:
            status.tables_done += 1
        elif end is TableEnd.FAILED:
            status.tables_failed += 1
            if failure is not None and len(status.failure_sample) < FAILURE_SAMPLE_SIZE:
                status.failure_sample.append(failure)
        elif end is TableEnd.SKIPPED:
            status.tables_skipped += 1
            self.skip(outcome.skipped)
        else:
            status.tables_cancelled += 1
        self._refresh(now)

    def ranges_planned(self, total: int) -> None:
        self.status.ranges_total = total

    def range_started(self, index: int, now: datetime) -> None:
        self._ranges[index] = RangeProgress(index=index, tallies=TableTallies(), running=0)
        self.status.ranges_running = len(self._ranges)
        self._refresh(now)

    def range_progressed(self, progress: RangeProgress, now: datetime) -> None:
        """A finished range's or a stale signal changes nothing: it never counts twice or back."""
        known = self._ranges.get(progress.index)
        if known is not None and progress.tallies.tables >= known.tallies.tables:
            self._ranges[progress.index] = progress
            self._refresh(now)

    def range_finished(self, index: int, tallies: TableTallies, now: datetime) -> None:
        """Its report's tallies replace its signalled ones."""
        self._ranges.pop(index, None)
        self.status.ranges_running = len(self._ranges)
        self.status.ranges_done += 1
        self.batch_finished(0, tallies, now)

    def batch_started(self, tables: int, now: datetime) -> None:
        self._batched += tables
        self._refresh(now)

    def batch_finished(self, tables: int, tallies: TableTallies, now: datetime) -> None:
        """A batch's tables that ended (those it handed back start purges of their own)."""
        self._batched -= tables
        self._settled.add(tallies.files)
        status = self.status
        status.tables_done += tallies.done
        status.tables_failed += tallies.failed
        status.tables_skipped += tallies.skipped
        status.tables_cancelled += tallies.cancelled
        room = FAILURE_SAMPLE_SIZE - len(status.failure_sample)
        status.failure_sample += tallies.failure_sample[: max(room, 0)]
        for entry in tallies.skipped_sample:
            self.skip(entry)
        self._refresh(now)

    def _count_live(self) -> None:
        """The table counts hold the settled ones plus the running ranges' latest: the old latest
        taken out, the new one put in."""
        live = TableTallies()
        for progress in self._ranges.values():
            tallies = progress.tallies
            live.done += tallies.done
            live.failed += tallies.failed
            live.skipped += tallies.skipped
            live.cancelled += tallies.cancelled
            live.files.add(tallies.files)
        status = self.status
        status.tables_done += live.done - self._live.done
        status.tables_failed += live.failed - self._live.failed
        status.tables_skipped += live.skipped - self._live.skipped
        status.tables_cancelled += live.cancelled - self._live.cancelled
        self._live = live

    def skip(self, entry: SkippedEntry | None) -> None:
        if entry is not None and len(self.status.skipped_sample) < FAILURE_SAMPLE_SIZE:
            self.status.skipped_sample.append(entry)

    def _refresh(self, now: datetime) -> None:
        status = self.status
        files = self._settled.model_copy()
        for running in self._running.values():
            files.add(running.files)
        self._count_live()
        files.add(self._live.files)
        status.files = files
        status.running = list(self._running.values())
        running_in_ranges = sum(progress.running for progress in self._ranges.values())
        status.tables_running = len(self._running) + self._batched + running_in_ranges
        status.updated_at = now
        elapsed = (now - status.started_at).total_seconds() if status.started_at else 0.0
        finished = status.tables_finished
        if elapsed > 0 and finished:
            per_second = finished / elapsed
            status.rate_tables_per_minute = round(per_second * 60, 2)
            status.eta_seconds = round((status.tables_total - finished) / per_second, 1)


def new_namespace_status(request: NamespacePurgeRequest) -> NamespacePurgeStatus:
    """A namespace purge's status at its start (a range's too, with its own total and controls)."""
    now = workflow.now()
    return NamespacePurgeStatus(
        **identity_of(request),
        purge_id=workflow.info().workflow_id,
        state=NamespacePurgeState.PENDING,
        recursive=request.walks_nested,
        dry_run=request.options.dry_run,
        max_concurrent_tables=request.max_concurrent_tables,
        selection=request.selection,
        bucket_requests_per_second=request.options.bucket_requests_per_second,
        started_at=now,
        updated_at=now,
    )
