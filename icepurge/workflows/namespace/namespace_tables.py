"""The PurgeNamespace workflow's table purges: the enumerated tables read a page at a time and
purged within the window of concurrent tables, each by a child PurgeTable workflow or, for small
tables, in batches; each one's outcome counted once. The workflow class (purge_namespace.py)
holds the handlers, the run, enumeration and the namespaces' drops.

Deterministic: no I/O, only the contract models; every side effect is an activity or a child.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from contextlib import suppress
from dataclasses import dataclass

from temporalio import workflow
from temporalio.exceptions import (
    ApplicationError,
    ChildWorkflowError,
    FailureError,
    WorkflowAlreadyStartedError,
)

from icepurge.contract.activity_steps import PURGE_RANGE_BATCH, PURGE_TABLE_BATCH, TABLE_PAGE
from icepurge.contract.batch_steps import (
    BatchTable,
    BatchTemplate,
    HandedBackTable,
    RangeBatchInput,
    RangeBatchResult,
    TableBatchInput,
    batch_size,
    takes_batches,
)
from icepurge.contract.controls import TableControl
from icepurge.contract.names import NAMESPACE_CONTROL_SIGNAL, WORKFLOW_TYPE
from icepurge.contract.namespace_request import NamespacePurgeRequest
from icepurge.contract.namespace_status import (
    NamespacePurgeState,
)
from icepurge.contract.namespace_steps import (
    TABLE_PAGE_SIZE,
    EnumerationSummary,
    TableName,
    TablePage,
    TablePageInput,
)
from icepurge.contract.purge_id import purge_id_for
from icepurge.contract.request import PurgeRequest
from icepurge.contract.search_attributes import start_attributes
from icepurge.contract.status import PurgeReport
from icepurge.contract.table_outcomes import TableOutcome, outcome_of_batch, outcome_of_report
from icepurge.contract.workflow_tasks import TABLE_PURGE_TASK_TIMEOUT
from icepurge.workflows.namespace.child_purges import start_child_purge
from icepurge.workflows.namespace.namespace_controls import (
    budget_share,
)
from icepurge.workflows.namespace.namespace_outcomes import KeptTables, already_started, outcome_of_failure
from icepurge.workflows.namespace.namespace_progress import NamespaceProgress
from icepurge.workflows.shared.event_stream import EventStream
from icepurge.workflows.shared.steps_runner import run_step
from icepurge.workflows.shared.unit_window import UnitWindow
from icepurge.workflows.shared.upgrades import BUDGET_OVER_TABLES_LEFT


@dataclass
class NamespaceRun:
    """A valid request and everything built from it, from the first instant of the run; a range
    of a tree has no events of its own (its namespace purge's stand for it)."""

    request: NamespacePurgeRequest
    progress: NamespaceProgress
    events: EventStream | None


class NamespaceTables(ABC):
    """Set by the workflow's `@workflow.init`: the run (None for an invalid request, `_invalid`
    saying why), the page of table names read last, and what the tables' purges left. The
    namespace purge runs it over its whole table list, or each range of its tree over its own."""

    _run: NamespaceRun | None
    _invalid: str | None
    _page: list[TableName]
    _page_offset: int
    _run_scoped: bool
    # Batches named by their place in the table list, a window of work units (SLIM_BATCHES).
    _slim: bool
    _kept: KeptTables
    # Tables purged inside a batch: no workflow of theirs to signal a control to.
    _in_batches: set[str]
    # Tables this run had left to purge when it began (BUDGET_OVER_TABLES_LEFT; None before).
    _tables_left: int | None

    @abstractmethod
    def _root_id(self) -> str:
        """The namespace purge: its table purges' parent, under which they are listed."""

    @abstractmethod
    def _table_request_id(self) -> str:
        """What each table purge's id derives from: one purge per table per namespace purge."""

    @abstractmethod
    async def _units_progressed(self) -> None:
        """Work units ended: tell whoever follows this purge."""

    def _namespace_run(self) -> NamespaceRun:
        if self._run is None:
            raise ApplicationError(
                f"the namespace purge's request is invalid: {self._invalid}", non_retryable=True
            )
        return self._run

    def _table_control(self) -> TableControl:
        status = self._namespace_run().progress.status
        share = budget_share(status.bucket_requests_per_second, self._tables_at_once())
        return TableControl(paused=status.paused, bucket_requests_per_second=share)

    def _tables_at_once(self) -> int:
        """The most tables purged at once: the window, whose batches each count their tables, and
        no more than the run had left, so a purge of fewer tables than its window shares the
        whole budget among them."""
        request = self._namespace_run().request
        most = request.max_concurrent_tables
        if self._slim and takes_batches(request.options, request.batch_tables):
            most *= batch_size(request.batch_tables)
        return min(most, self._tables_left) if self._tables_left else most

    async def _purge_tables(
        self, request: NamespacePurgeRequest, tree: EnumerationSummary, next_table: int
    ) -> int:
        """A sliding window, so a small table never waits behind a giant one: of table purges, or
        with `batch_tables` of batches of small tables, each counted as its tables (a table a batch
        hands back gets its own purge, counted as one). Returns the first table not yet started:
        below the total when the run should continue as new (the window drains first, so no child
        outlives the run that awaits it)."""
        progress = self._namespace_run().progress
        progress.move_to(NamespacePurgeState.PURGING, workflow.now())
        # Requests from before batches existed have no batch_tables: one workflow per table, as then.
        old_batches = request.batch_tables is not None and takes_batches(
            request.options, request.batch_tables
        )
        batch = batch_size(request.batch_tables) if old_batches else 1
        window: UnitWindow[list[int]] = UnitWindow(request.max_concurrent_tables, weighed=True)
        started = next_table

        async def start_next() -> None:
            nonlocal started
            count = min(batch, tree.tables_total - started)
            names = [await self._table_at(tree, index) for index in range(started, started + count)]
            if batch > 1:
                window.start(self._purge_batch(request, started, names, progress), count)
            else:
                window.start(self._purge_table(request, started, names[0], progress), count)
            started += count

        async def settle(handed_back: list[int]) -> None:
            for index in handed_back:
                # Handed back by its batch: a table purge of its own.
                name = await self._table_at(tree, index)
                window.start(self._purge_table(request, index, name, progress))

        await window.run(
            more=lambda: started < tree.tables_total,
            paused=lambda: progress.status.paused,
            start_next=start_next,
            settle=settle,
            round_ended=self._round_ended,
        )
        return started

    async def _purge_units(
        self, request: NamespacePurgeRequest, tree: EnumerationSummary, next_table: int, end: int
    ) -> int:
        """A sliding window of work units over the tables before `end`, so a small table never
        waits behind a giant one: each a batch of small tables named by its place in the table
        list (its names never reach history), or one table purge workflow; a table a batch hands
        back gets a purge of its own, one unit more. Returns the first table not yet started, as
        `_purge_tables` does."""
        progress = self._namespace_run().progress
        progress.move_to(NamespacePurgeState.PURGING, workflow.now())
        if workflow.patched(BUDGET_OVER_TABLES_LEFT):
            self._tables_left = end - next_table
        batched = takes_batches(request.options, request.batch_tables)
        batch = batch_size(request.batch_tables) if batched else 1
        window: UnitWindow[list[HandedBackTable]] = UnitWindow(request.max_concurrent_tables)
        started = next_table

        async def start_next() -> None:
            nonlocal started
            count = min(batch, end - started)
            if batched:
                window.start(self._purge_range(request, tree, started, count, progress))
            else:
                window.start(self._purge_one(request, started, await self._table_at(tree, started)))
            started += count

        async def settle(handed_back: list[HandedBackTable]) -> None:
            for handed in handed_back:
                window.start(self._purge_one(request, handed.index, handed.name))

        await window.run(
            more=lambda: started < end,
            paused=lambda: progress.status.paused,
            start_next=start_next,
            settle=settle,
            round_ended=self._round_ended,
        )
        return started

    async def _round_ended(self) -> None:
        self._progress_published()
        await self._units_progressed()

    def _progress_published(self) -> None:
        """The tables' progress moved: show it (a namespace purge also throttles its search
        attributes' share of it)."""
        self._namespace_run().progress.publish()

    async def _purge_one(
        self, request: NamespacePurgeRequest, index: int, name: TableName
    ) -> list[HandedBackTable]:
        await self._purge_table(request, index, name, self._namespace_run().progress)
        return []

    async def _purge_range(
        self,
        request: NamespacePurgeRequest,
        tree: EnumerationSummary,
        first: int,
        count: int,
        progress: NamespaceProgress,
    ) -> list[HandedBackTable]:
        """Small tables in one activity, which reads their names and answers with counts; returns
        those it handed back untouched."""
        progress.batch_started(count, workflow.now())
        root_id = self._root_id()
        step = RangeBatchInput(
            tree_location=tree.tree_location,
            first=first,
            count=count,
            template=self._table_template(request),
            listed_under=root_id if root_id != workflow.info().workflow_id else None,
        )
        result: RangeBatchResult = await run_step(
            PURGE_RANGE_BATCH,
            step,
            summary=f"purge tables {first + 1}-{first + count} of {tree.tables_total}",
            cancellation_type=workflow.ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
        )
        progress.batch_finished(count, result.tallies, workflow.now())
        return result.handed_back

    async def _table_at(self, tree: EnumerationSummary, index: int) -> TableName:
        if not self._page_offset <= index < self._page_offset + len(self._page):
            page: TablePage = await run_step(
                TABLE_PAGE,
                TablePageInput(tree_location=tree.tree_location, offset=index, limit=TABLE_PAGE_SIZE),
            )
            self._page, self._page_offset = page.tables, index
        return self._page[index - self._page_offset]

    def _table_template(self, request: NamespacePurgeRequest) -> BatchTemplate:
        """What each table's purge request shares; its events go to this workflow, which keeps
        the running tables' counts."""
        share = self._table_control().bucket_requests_per_second
        return BatchTemplate(
            catalog=request.catalog,
            requested_by=request.requested_by,
            request_id=self._table_request_id(),
            notify_workflow_id=workflow.info().workflow_id,
            options=request.options.model_copy(update={"bucket_requests_per_second": share}),
        )

    def _table_request(self, request: NamespacePurgeRequest, name: TableName) -> PurgeRequest:
        return self._table_template(request).request_for(name)

    async def _purge_table(
        self, request: NamespacePurgeRequest, index: int, name: TableName, progress: NamespaceProgress
    ) -> list[int]:
        parent_id = self._root_id()
        child = self._table_request(request, name)
        child_id = purge_id_for(child)
        progress.started(child_id, child.table_name, workflow.now())
        try:
            handle = await start_child_purge(
                WORKFLOW_TYPE,
                child,
                child_id=child_id,
                result_type=PurgeReport,
                # A terminated namespace purge must not stop a table purge whose table is dropped.
                close_policy=workflow.ParentClosePolicy.ABANDON,
                summary=f"purge {child.table_name} (namespace purge {parent_id})",
                search_attributes=start_attributes(child, parent_id),
                task_timeout=TABLE_PURGE_TASK_TIMEOUT,
            )
            report = await handle
            outcome = outcome_of_report(child_id, child.table_name, report)
        except ChildWorkflowError as error:
            outcome = outcome_of_failure(child_id, child.table_name, error)
        except WorkflowAlreadyStartedError:
            outcome = already_started(child_id, child.table_name)
        self._table_finished(request, index, child_id, outcome)
        return []

    async def _purge_batch(
        self,
        request: NamespacePurgeRequest,
        first: int,
        names: list[TableName],
        progress: NamespaceProgress,
    ) -> list[int]:
        """Small tables in one activity; returns the places of those it handed back untouched."""
        tables = []
        for name in names:
            child = self._table_request(request, name)
            tables.append(BatchTable(purge_id=purge_id_for(child), request=child))
            progress.started(tables[-1].purge_id, child.table_name, workflow.now())
            self._in_batches.add(tables[-1].purge_id)
        result = await run_step(
            PURGE_TABLE_BATCH,
            TableBatchInput(tables=tables),
            summary=f"purge {len(tables)} small tables",
            cancellation_type=workflow.ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
        )
        self._in_batches.difference_update(table.purge_id for table in tables)
        reports = {outcome.purge_id: outcome.report for outcome in result.outcomes}
        handed_back = []
        for index, table in enumerate(tables, start=first):
            report = reports.get(table.purge_id)
            if report is None:
                handed_back.append(index)
                continue
            outcome = outcome_of_batch(table.purge_id, table.request.table_name, report)
            self._table_finished(request, index, table.purge_id, outcome)
        return handed_back

    def _table_finished(
        self, request: NamespacePurgeRequest, index: int, purge_id: str, outcome: TableOutcome
    ) -> None:
        self._namespace_run().progress.finished(purge_id, outcome, workflow.now())
        if request.options.dry_run and outcome.table_stays:
            self._kept.keep(index)

    async def _control_tables(self) -> None:
        """Pass the pause and the budget share on to the running table purge workflows."""
        control = self._table_control()
        running = self._namespace_run().progress.status.running
        for table in [table for table in running if table.purge_id not in self._in_batches]:
            # A table purge that closed meanwhile needs no control.
            with suppress(FailureError):
                await workflow.get_external_workflow_handle(table.purge_id).signal(
                    NAMESPACE_CONTROL_SIGNAL, control
                )

    def _run_chain(self) -> str | None:
        """What tells this purge's state from an earlier or later purge under the same id."""
        return workflow.info().first_execution_run_id if self._run_scoped else None
