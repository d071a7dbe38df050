"""The PurgeTableRange workflow: one range of a namespace purge's table list, purged within its
own window (batches of small tables, a workflow for each other table) and its own
continue-as-new chain, its tallies signalled to the namespace purge as it goes and returned when
it ends. Its table purges are the namespace purge's: the same request ids, parent and listing as
if the namespace purge ran them itself.

Deterministic: no I/O; every side effect is an activity or a child workflow.
"""

from __future__ import annotations

import asyncio
from datetime import datetime, timedelta
from typing import Any

from temporalio import workflow
from temporalio.exceptions import FailureError

from icepurge.contract.controls import TableControl
from icepurge.contract.events import PurgeEvent
from icepurge.contract.names import (
    EVENT_SIGNAL,
    NAMESPACE_CONTROL_SIGNAL,
    RANGE_PROGRESS_SIGNAL,
    STATUS_QUERY,
    TABLE_RANGE_WORKFLOW_TYPE,
)
from icepurge.contract.namespace_status import NamespacePurgeState, NamespacePurgeStatus
from icepurge.contract.namespace_steps import EnumerationSummary
from icepurge.contract.range_steps import (
    RANGE_PROGRESS_SECONDS,
    RangeProgress,
    TableRange,
    TableRangeReport,
)
from icepurge.contract.strict_model import StrictModel
from icepurge.contract.table_outcomes import TableTallies
from icepurge.workflows.namespace.namespace_details import namespace_details_markdown
from icepurge.workflows.namespace.namespace_outcomes import KeptTables
from icepurge.workflows.namespace.namespace_progress import NamespaceProgress, new_namespace_status
from icepurge.workflows.namespace.namespace_tables import NamespaceRun, NamespaceTables
from icepurge.workflows.shared.held_back import HeldBack
from icepurge.workflows.shared.upgrades import PAUSED_PROGRESS_TOLD, RANGE_TRAILING_PROGRESS


class CarriedRangeState(StrictModel):
    """What one run of a range hands the next through continue-as-new."""

    status: NamespacePurgeStatus
    next_table: int
    kept: KeptTables


def tallies_of(status: NamespacePurgeStatus, samples: bool) -> TableTallies:
    return TableTallies(
        done=status.tables_done,
        failed=status.tables_failed,
        skipped=status.tables_skipped,
        cancelled=status.tables_cancelled,
        files=status.files.model_copy(),
        failure_sample=list(status.failure_sample) if samples else [],
        skipped_sample=list(status.skipped_sample) if samples else [],
    )


def _show(status: NamespacePurgeStatus) -> None:
    workflow.set_current_details(namespace_details_markdown(status))


@workflow.defn(name=TABLE_RANGE_WORKFLOW_TYPE)
class PurgeTableRangeWorkflow(NamespaceTables):
    @workflow.init
    def __init__(self, raw: dict[str, Any], carried: CarriedRangeState | None = None) -> None:
        table_range = TableRange.model_validate(raw)
        self._range = table_range
        self._page = []
        self._page_offset = 0
        self._run_scoped = True
        self._slim = True
        self._kept = carried.kept if carried else KeptTables()
        self._in_batches = set()
        self._tables_left = None
        self._invalid = None
        self._signalled_at: datetime | None = None
        self._held_back = HeldBack(timedelta(seconds=RANGE_PROGRESS_SECONDS))
        status = carried.status if carried else _new_status(table_range)
        self._run = NamespaceRun(table_range.request, NamespaceProgress(status, _show), None)

    @workflow.query(name=STATUS_QUERY)
    def status(self) -> NamespacePurgeStatus:
        return self._namespace_run().progress.status

    @workflow.signal(name=EVENT_SIGNAL)
    async def table_event(self, event: PurgeEvent) -> None:
        """A table purge of its own tells its counts here; paused, no unit ends to pass them on.
        (A signal handler runs as a task of its own, sync or not: this one's order is unchanged.)"""
        progress = self._namespace_run().progress
        progress.event(event, workflow.now())
        if progress.status.paused and workflow.patched(PAUSED_PROGRESS_TOLD):
            await self._units_progressed()

    @workflow.signal(name=NAMESPACE_CONTROL_SIGNAL)
    async def namespace_control(self, control: TableControl) -> None:
        """The namespace purge's pause and this range's budget share, passed on to its tables."""
        progress = self._namespace_run().progress
        progress.paused(control.paused)
        progress.budget(control.bucket_requests_per_second)
        await self._control_tables()
        progress.publish()

    @workflow.run
    async def run(self, raw: dict[str, Any], carried: CarriedRangeState | None = None) -> TableRangeReport:
        table_range = self._range
        progress = self._namespace_run().progress
        if carried:
            progress.next_run()
        tree = EnumerationSummary(
            tree_location=table_range.tree_location,
            tables_total=table_range.tables_total,
            namespaces_total=0,
            entries_skipped=0,
            skipped_sample=[],
        )
        first = carried.next_table if carried else table_range.first
        try:
            next_table = await self._purge_units(table_range.request, tree, first, table_range.end)
        except asyncio.CancelledError:
            # Cancelled with its namespace purge: what its tables came to still counts there.
            progress.move_to(NamespacePurgeState.CANCELLED, workflow.now())
            return await self._report()
        if next_table < table_range.end:
            await workflow.wait_condition(workflow.all_handlers_finished)
            await self._progress_now()
            carry = CarriedRangeState(status=progress.status, next_table=next_table, kept=self._kept)
            workflow.continue_as_new(args=[raw, carry])
        progress.move_to(NamespacePurgeState.SUCCEEDED, workflow.now())
        return await self._report()

    async def _report(self) -> TableRangeReport:
        await workflow.wait_condition(workflow.all_handlers_finished)
        return TableRangeReport(
            tallies=tallies_of(self.status(), samples=True),
            kept=self._kept.indices,
            kept_overflow=self._kept.overflow,
        )

    def _root_id(self) -> str:
        return self._range.root_id

    def _table_request_id(self) -> str:
        return self._range.request_id

    async def _units_progressed(self) -> None:
        """At most every RANGE_PROGRESS_SECONDS, so a range's signals stay a small part of its
        namespace purge's history whatever its tables; tallies held back go once the interval is up,
        or a range that pauses (no unit ends after its last) would leave its last ones unsaid."""
        if self._held_back.armed:
            return
        wait = self._held_back.left(self._signalled_at)
        if wait <= timedelta(0):
            await self._signal_progress()
        elif workflow.patched(RANGE_TRAILING_PROGRESS):
            self._held_back.arm(wait, self._signal_progress)

    async def _progress_now(self) -> None:
        """Tallies held back go before the run continues as new: the next run may start paused,
        with no unit left to end and tell them."""
        if self._held_back.disarm():
            await self._signal_progress()

    async def _signal_progress(self) -> None:
        self._signalled_at = workflow.now()
        status = self.status()
        progress = RangeProgress(
            index=self._range.index, tallies=tallies_of(status, samples=False), running=status.tables_running
        )
        # A namespace purge that closed meanwhile needs no progress.
        try:
            await workflow.get_external_workflow_handle(self._range.root_id).signal(
                RANGE_PROGRESS_SIGNAL, progress
            )
        except FailureError:
            return


def _new_status(table_range: TableRange) -> NamespacePurgeStatus:
    control = table_range.control
    return new_namespace_status(table_range.request).model_copy(
        update={
            "tables_total": table_range.tables,
            "paused": control.paused,
            "bucket_requests_per_second": control.bucket_requests_per_second,
        }
    )
