"""A namespace purge too big for one workflow, as a tree: its table list handed in ranges to
child PurgeTableRange workflows, a window of them at once, each with its share of the window and
of the budget; their tallies added up as they signal them and replaced by their reports.

Deterministic: no I/O, only the contract models; every side effect is a child workflow.
"""

from __future__ import annotations

from abc import abstractmethod
from contextlib import suppress

from temporalio import workflow
from temporalio.exceptions import FailureError

from icepurge.contract.controls import TableControl
from icepurge.contract.names import NAMESPACE_CONTROL_SIGNAL, TABLE_RANGE_WORKFLOW_TYPE
from icepurge.contract.namespace_request import NamespacePurgeRequest
from icepurge.contract.namespace_status import NamespacePurgeState
from icepurge.contract.namespace_steps import EnumerationSummary
from icepurge.contract.range_steps import (
    TableRange,
    TableRangeReport,
    range_id,
    range_size,
    ranges_at_once,
    ranges_in_flight,
)
from icepurge.workflows.namespace.child_purges import start_child_purge
from icepurge.workflows.namespace.namespace_controls import budget_share
from icepurge.workflows.namespace.namespace_tables import NamespaceTables
from icepurge.workflows.shared.unit_window import UnitWindow
from icepurge.workflows.shared.upgrades import WHOLE_WINDOW_RANGES


class NamespaceRanges(NamespaceTables):
    """Set by the workflow's `@workflow.init`: the running ranges' workflow ids, by place, and the
    ranges this run runs at once (None until it hands out its first)."""

    _ranges: dict[int, str]
    _range_slots: int | None

    @abstractmethod
    def _events_progressed(self) -> None:
        """The namespace purge's progress event, when one is due."""

    def _is_tree(self, request: NamespacePurgeRequest, tree: EnumerationSummary) -> bool:
        return tree.tables_total > range_size(request)

    def _ranges_at_once(self) -> int:
        return self._range_slots or ranges_at_once(self._namespace_run().request.max_concurrent_tables)

    def _range_control(self) -> TableControl:
        status = self._namespace_run().progress.status
        share = budget_share(status.bucket_requests_per_second, self._ranges_at_once())
        return TableControl(paused=status.paused, bucket_requests_per_second=share)

    async def _control_ranges(self) -> None:
        control = self._range_control()
        for child_id in list(self._ranges.values()):
            # A range that closed meanwhile needs no control.
            with suppress(FailureError):
                await workflow.get_external_workflow_handle(child_id).signal(
                    NAMESPACE_CONTROL_SIGNAL, control
                )

    async def _purge_ranges(
        self, request: NamespacePurgeRequest, tree: EnumerationSummary, next_table: int
    ) -> int:
        """A sliding window of ranges; returns the first table not yet handed out, below the total
        when the run should continue as new (the running ranges end first)."""
        progress = self._namespace_run().progress
        progress.move_to(NamespacePurgeState.PURGING, workflow.now())
        size = range_size(request)
        progress.ranges_planned(-(-tree.tables_total // size))
        self._range_slots = (
            ranges_in_flight(request.max_concurrent_tables, -(-(tree.tables_total - next_table) // size))
            if workflow.patched(WHOLE_WINDOW_RANGES)
            else ranges_at_once(request.max_concurrent_tables)
        )
        window: UnitWindow[None] = UnitWindow(self._range_slots)
        started = next_table

        async def start_next() -> None:
            nonlocal started
            index = started // size
            end = min((index + 1) * size, tree.tables_total)
            window.start(self._purge_range_child(request, tree, index, started, end))
            started = end

        async def settle(_: None) -> None:
            """A range that failed raised its error already: it fails the namespace purge, as a
            failed step would."""

        async def round_ended() -> None:
            progress.publish()
            self._events_progressed()

        await window.run(
            more=lambda: started < tree.tables_total,
            paused=lambda: progress.status.paused,
            start_next=start_next,
            settle=settle,
            round_ended=round_ended,
        )
        return started

    async def _purge_range_child(
        self, request: NamespacePurgeRequest, tree: EnumerationSummary, index: int, first: int, end: int
    ) -> None:
        progress = self._namespace_run().progress
        root_id = progress.status.purge_id
        window = max(1, request.max_concurrent_tables // self._ranges_at_once())
        table_range = TableRange(
            root_id=root_id,
            index=index,
            request=request.model_copy(update={"max_concurrent_tables": window}),
            request_id=self._table_request_id(),
            tree_location=tree.tree_location,
            tables_total=tree.tables_total,
            first=first,
            end=end,
            control=self._range_control(),
        )
        child_id = range_id(root_id, self._run_chain(), index)
        self._ranges[index] = child_id
        progress.range_started(index, workflow.now())
        try:
            handle = await start_child_purge(
                TABLE_RANGE_WORKFLOW_TYPE,
                table_range,
                child_id=child_id,
                result_type=TableRangeReport,
                close_policy=workflow.ParentClosePolicy.REQUEST_CANCEL,
                summary=f"tables {first + 1}-{end} of {tree.tables_total} ({request.name})",
            )
            # A pause or budget that came while the range was starting found no workflow to signal.
            if self._range_control() != table_range.control:
                await handle.signal(NAMESPACE_CONTROL_SIGNAL, self._range_control())
            report: TableRangeReport = await handle
        finally:
            del self._ranges[index]
        progress.range_finished(index, report.tallies, workflow.now())
        for kept in report.kept:
            self._kept.keep(kept)
        self._kept.overflow = self._kept.overflow or report.kept_overflow
