"""A tree's namespace purge counts its ranges' tables live from their signals, and exactly once
when they end: a stale or late signal never counts a table twice or takes one back."""

from __future__ import annotations

from datetime import UTC, datetime

from icepurge.contract.namespace_status import FileTotals, NamespacePurgeState, NamespacePurgeStatus
from icepurge.contract.range_steps import RangeProgress
from icepurge.contract.table_outcomes import TableTallies
from icepurge.workflows.namespace.namespace_progress import NamespaceProgress

NOW = datetime(2026, 11, 28, tzinfo=UTC)


def _progress() -> NamespaceProgress:
    status = NamespacePurgeStatus(
        purge_id="icepurge-ns-test",
        state=NamespacePurgeState.PURGING,
        catalog="lake",
        namespace=["ns"],
        recursive=False,
        requested_by="pytest",
        max_concurrent_tables=32,
        tables_total=300,
        started_at=NOW,
    )
    return NamespaceProgress(status, lambda _: None)


def _tallies(done: int, failed: int = 0) -> TableTallies:
    return TableTallies(done=done, failed=failed, files=FileTotals(deleted=done * 10, done=done * 10))


def test_running_ranges_count_live_and_their_reports_replace_their_signals() -> None:
    progress = _progress()
    for index in (0, 1):
        progress.range_started(index, NOW)
    progress.range_progressed(RangeProgress(index=0, tallies=_tallies(40, 1), running=8), NOW)
    progress.range_progressed(RangeProgress(index=1, tallies=_tallies(10), running=4), NOW)
    status = progress.status
    assert (status.tables_done, status.tables_failed, status.tables_running, status.files.deleted) == (
        50,
        1,
        12,
        500,
    )

    # A signal older than the latest (fewer tables ended) changes nothing.
    progress.range_progressed(RangeProgress(index=0, tallies=_tallies(30), running=8), NOW)
    assert (status.tables_done, status.tables_failed) == (50, 1)

    progress.range_finished(0, _tallies(99, 1), NOW)
    assert (status.tables_done, status.tables_failed, status.tables_running) == (109, 1, 4)
    assert (status.ranges_done, status.ranges_running, status.files.deleted) == (1, 1, 1_090)

    # A signal that arrives after its range's report counts nothing more.
    progress.range_progressed(RangeProgress(index=0, tallies=_tallies(100), running=0), NOW)
    assert status.tables_done == 109

    progress.range_finished(1, _tallies(100), NOW)
    assert (status.tables_done, status.tables_failed, status.tables_running, status.files.deleted) == (
        199,
        1,
        0,
        1_990,
    )
