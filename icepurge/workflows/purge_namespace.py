"""The PurgeNamespace workflow: enumerate a namespace tree (or a whole catalog) into the state
location, purge its tables by name as a sliding window of PurgeTable children, drop the
namespaces left empty (deepest first), report across the children.

Deterministic: no I/O; every side effect is an activity or a child workflow.
"""

from __future__ import annotations

import asyncio
from contextlib import suppress
from dataclasses import dataclass
from typing import Any, NoReturn

from pydantic import BaseModel, ConfigDict, Field
from temporalio import workflow
from temporalio.common import WorkflowIDReusePolicy
from temporalio.exceptions import (
    ActivityError,
    ApplicationError,
    CancelledError,
    ChildWorkflowError,
    FailureError,
    WorkflowAlreadyStartedError,
)

from icepurge.contract.activity_steps import DROP_NAMESPACES, ENUMERATE, PURGE_TABLE_BATCH, TABLE_PAGE
from icepurge.contract.batch_steps import BatchTable, TableBatchInput, takes_batches
from icepurge.contract.controls import TableControl
from icepurge.contract.events import EventCursor, EventKind, PurgeEvent
from icepurge.contract.names import (
    ERROR_INVALID_REQUEST,
    EVENT_SIGNAL,
    NAMESPACE_CONTROL_SIGNAL,
    NAMESPACE_WORKFLOW_TYPE,
    STATUS_QUERY,
    WORKFLOW_TYPE,
)
from icepurge.contract.namespace_request import NamespacePurgeRequest, parse_namespace_request
from icepurge.contract.namespace_status import (
    NamespacePurgeReport,
    NamespacePurgeState,
    NamespacePurgeStatus,
)
from icepurge.contract.namespace_steps import (
    TABLE_PAGE_SIZE,
    DropNamespacesInput,
    DropNamespacesResult,
    EnumerateInput,
    EnumerationSummary,
    TableName,
    TablePage,
    TablePageInput,
)
from icepurge.contract.purge_id import purge_id_for
from icepurge.contract.request import PurgeRequest
from icepurge.contract.search_attributes import namespace_updates, start_attributes
from icepurge.contract.status import PurgeReport
from icepurge.contract.workflow_tasks import TABLE_PURGE_TASK_TIMEOUT
from icepurge.workflows.control_handlers import ControlChecks, ControlHandlers
from icepurge.workflows.event_stream import EventStream
from icepurge.workflows.namespace_controls import (
    budget_share,
    check_namespace_budget,
    check_namespace_pause,
    check_namespace_resume,
)
from icepurge.workflows.namespace_details import namespace_details_markdown
from icepurge.workflows.namespace_events import NamespaceEvents
from icepurge.workflows.namespace_outcomes import (
    KeptTables,
    already_started,
    drops_not_previewed,
    outcome_of_batch,
    outcome_of_failure,
    outcome_of_report,
)
from icepurge.workflows.namespace_progress import NamespaceProgress, TableOutcome
from icepurge.workflows.run_start import start_run
from icepurge.workflows.step_outcomes import (
    cancel_all,
    error_memo,
    failure_reason,
    failure_type,
)
from icepurge.workflows.steps_runner import run_step
from icepurge.workflows.upgrades import PREVIEW_DROPS, RUN_SCOPED_STATE

# Between a namespace purge's id and its run chain in its table purges' request ids.
CHILD_REQUEST_SEPARATOR = "@"


class CarriedNamespaceState(BaseModel):
    """What one run hands the next through continue-as-new: no table names, whatever the tree."""

    model_config = ConfigDict(extra="forbid")

    status: NamespacePurgeStatus
    tree: EnumerationSummary
    next_table: int
    events: EventCursor
    kept: KeptTables = Field(default_factory=KeptTables)


NAMESPACE_CONTROL_CHECKS = ControlChecks(
    check_namespace_pause, check_namespace_resume, check_namespace_budget
)


def _publish(status: NamespacePurgeStatus) -> None:
    workflow.upsert_search_attributes(namespace_updates(status))
    workflow.set_current_details(namespace_details_markdown(status))


@dataclass
class NamespaceRun:
    """A valid request and everything built from it, from the first instant of the run."""

    request: NamespacePurgeRequest
    progress: NamespaceProgress
    events: EventStream


@workflow.defn(name=NAMESPACE_WORKFLOW_TYPE)
class PurgeNamespaceWorkflow(ControlHandlers[NamespacePurgeStatus]):
    @workflow.init
    def __init__(self, request: dict[str, Any], carried: CarriedNamespaceState | None = None) -> None:
        self._page: list[TableName] = []
        self._page_offset = 0
        self._run_scoped = False
        self._kept = carried.kept if carried else KeptTables()
        # Tables purged inside a batch: no workflow of theirs to signal a control to.
        self._in_batches: set[str] = set()
        self._invalid: str | None = None
        self._run: NamespaceRun | None = None
        start = start_run(request, parse_namespace_request, carried, _new_status, NamespaceEvents)
        if isinstance(start, str):
            self._invalid = start
            return
        self._run = NamespaceRun(start.request, NamespaceProgress(start.status, _publish), start.events)

    @workflow.query(name=STATUS_QUERY)
    def status(self) -> NamespacePurgeStatus:
        return self._namespace_run().progress.status

    def _controlled_status(self) -> NamespacePurgeStatus:
        return self.status()

    def _control_checks(self) -> ControlChecks[NamespacePurgeStatus]:
        return NAMESPACE_CONTROL_CHECKS

    async def _apply_pause(self, paused: bool) -> None:
        """A pause starts no more table purges and pauses the running ones at their checkpoints."""
        progress = self._namespace_run().progress
        progress.paused(paused)
        await self._control_running()
        progress.publish()

    async def _apply_budget(self, requests_per_second: float | None) -> None:
        """The new budget is shared by the window: running table purges take their share within
        seconds, new ones start with it."""
        progress = self._namespace_run().progress
        progress.budget(requests_per_second)
        await self._control_running()
        progress.publish()

    def _table_control(self) -> TableControl:
        status = self.status()
        share = budget_share(status.bucket_requests_per_second, status.max_concurrent_tables)
        return TableControl(paused=status.paused, bucket_requests_per_second=share)

    async def _control_running(self) -> None:
        control = self._table_control()
        for table in [table for table in self.status().running if table.purge_id not in self._in_batches]:
            # A table purge that closed meanwhile needs no control.
            with suppress(FailureError):
                await workflow.get_external_workflow_handle(table.purge_id).signal(
                    NAMESPACE_CONTROL_SIGNAL, control
                )

    @workflow.signal(name=EVENT_SIGNAL)
    def table_event(self, event: PurgeEvent) -> None:
        """Each table purge signals its events here: the running ones' counts stay live."""
        if self._run is not None:
            self._run.progress.event(event, workflow.now())

    @workflow.run
    async def run(
        self, request: dict[str, Any], carried: CarriedNamespaceState | None = None
    ) -> NamespacePurgeReport:
        self._run_scoped = workflow.patched(RUN_SCOPED_STATE)
        if self._run is None:
            raise ApplicationError(str(self._invalid), type=ERROR_INVALID_REQUEST, non_retryable=True)
        parsed, progress, events = self._run.request, self._run.progress, self._run.events
        status = progress.status
        events.start()
        if carried:
            progress.next_run()
        else:
            events.emit(EventKind.STARTED)
        progress.publish()
        try:
            tree = carried.tree if carried else await self._enumerate(parsed, progress)
            next_table = await self._purge_tables(parsed, tree, carried.next_table if carried else 0)
            if next_table < tree.tables_total:
                await events.close()
                await workflow.wait_condition(workflow.all_handlers_finished)
                carry = CarriedNamespaceState(
                    status=status, tree=tree, next_table=next_table, events=events.cursor, kept=self._kept
                )
                workflow.continue_as_new(args=[parsed.model_dump(mode="json"), carry])
            if not parsed.options.dry_run:
                await self._drop_namespaces(parsed, tree, progress)
            elif workflow.patched(PREVIEW_DROPS):
                await self._drop_namespaces(parsed, tree, progress, preview=True)
            failed = status.tables_failed or status.files.failed
            final = NamespacePurgeState.SUCCEEDED_WITH_ERRORS if failed else NamespacePurgeState.SUCCEEDED
            progress.move_to(final, workflow.now())
            await self._close(EventKind.COMPLETED_WITH_ERRORS if failed else EventKind.COMPLETED)
            return self._report()
        except ActivityError as error:
            if isinstance(error.cause, CancelledError):
                await self._stop_cancelled()
                raise
            await self._fail(failure_reason(error), failure_type(error))
        except asyncio.CancelledError:
            await self._stop_cancelled()
            raise

    def _namespace_run(self) -> NamespaceRun:
        if self._run is None:
            raise ApplicationError(
                f"the namespace purge's request is invalid: {self._invalid}", non_retryable=True
            )
        return self._run

    async def _close(self, final: EventKind) -> None:
        """The last event, delivered; then no handler is left half-way when the run ends."""
        events = self._namespace_run().events
        events.emit(final)
        await events.close()
        await workflow.wait_condition(workflow.all_handlers_finished)

    async def _fail(self, reason: str, error_type: str | None) -> NoReturn:
        workflow.upsert_memo(error_memo(reason, error_type))
        self._namespace_run().progress.failed(reason, error_type, workflow.now())
        await self._close(EventKind.FAILED)
        raise ApplicationError(reason, type=error_type, non_retryable=True) from None

    async def _stop_cancelled(self) -> None:
        self._namespace_run().progress.move_to(NamespacePurgeState.CANCELLED, workflow.now())
        await self._close(EventKind.CANCELLED)

    def _report(self) -> NamespacePurgeReport:
        status = self.status()
        now = workflow.now()
        return NamespacePurgeReport(
            status=status, duration_seconds=(now - (status.started_at or now)).total_seconds()
        )

    async def _enumerate(
        self, request: NamespacePurgeRequest, progress: NamespaceProgress
    ) -> EnumerationSummary:
        progress.move_to(NamespacePurgeState.ENUMERATING, workflow.now())
        status = progress.status
        tree: EnumerationSummary = await run_step(
            ENUMERATE,
            EnumerateInput(
                purge_id=status.purge_id,
                catalog=request.catalog,
                namespace=request.namespace,
                nested=request.walks_nested,
                run_chain=self._run_chain(),
            ),
        )
        progress.enumerated(tree)
        return tree

    async def _purge_tables(
        self, request: NamespacePurgeRequest, tree: EnumerationSummary, next_table: int
    ) -> int:
        """A sliding window, so a small table never waits behind a giant one: of table purges, or
        with `batch_tables` of batches of small tables, each counted as its tables (a table a batch
        hands back gets its own purge, counted as one). Returns the first table not yet started:
        below the total when the run should continue as new (the window drains first, so no child
        outlives the run that awaits it)."""
        progress, events = self._namespace_run().progress, self._namespace_run().events
        progress.move_to(NamespacePurgeState.PURGING, workflow.now())
        batch = request.batch_tables if takes_batches(request.options, request.batch_tables) else 1
        in_flight: dict[asyncio.Task[list[int]], int] = {}

        def room() -> bool:
            return sum(in_flight.values()) < request.max_concurrent_tables

        try:
            while True:
                suggested = workflow.info().is_continue_as_new_suggested()
                while (
                    room() and next_table < tree.tables_total and not suggested and not progress.status.paused
                ):
                    count = min(batch, tree.tables_total - next_table)
                    names = [
                        await self._table_at(tree, index) for index in range(next_table, next_table + count)
                    ]
                    if batch > 1:
                        work = self._purge_batch(request, next_table, names, progress)
                    else:
                        work = self._purge_table(request, next_table, names[0], progress)
                    in_flight[asyncio.ensure_future(work)] = count
                    next_table += count
                more = next_table < tree.tables_total and not suggested
                if not in_flight and (not more or not progress.status.paused):
                    return next_table
                # A running purge ends, or (paused) the resume comes.

                def ready(more: bool = more) -> bool:
                    return any(task.done() for task in in_flight) or (
                        more and room() and not progress.status.paused
                    )

                await workflow.wait_condition(ready)
                for task in [task for task in in_flight if task.done()]:
                    del in_flight[task]
                    for index in task.result():
                        # Handed back by its batch: a table purge of its own.
                        name = await self._table_at(tree, index)
                        in_flight[
                            asyncio.ensure_future(self._purge_table(request, index, name, progress))
                        ] = 1
                progress.publish()
                events.progress()
        except asyncio.CancelledError:
            await cancel_all(list(in_flight))
            raise

    async def _table_at(self, tree: EnumerationSummary, index: int) -> TableName:
        if not self._page_offset <= index < self._page_offset + len(self._page):
            page: TablePage = await run_step(
                TABLE_PAGE,
                TablePageInput(tree_location=tree.tree_location, offset=index, limit=TABLE_PAGE_SIZE),
            )
            self._page, self._page_offset = page.tables, index
        return self._page[index - self._page_offset]

    def _table_request(self, request: NamespacePurgeRequest, name: TableName) -> PurgeRequest:
        parent_id = self.status().purge_id
        # The parent's id and run chain as request id: one purge per table per namespace purge,
        # whatever retries, replays or continue-as-new happen, and a new one when the namespace
        # is purged again after this purge closed.
        chain = self._run_chain()
        share = self._table_control().bucket_requests_per_second
        return PurgeRequest(
            catalog=request.catalog,
            namespace=name.namespace,
            table=name.table,
            requested_by=request.requested_by,
            request_id=f"{parent_id}{CHILD_REQUEST_SEPARATOR}{chain}" if chain else parent_id,
            notify_workflow_id=parent_id,
            options=request.options.model_copy(update={"bucket_requests_per_second": share}),
        )

    async def _purge_table(
        self, request: NamespacePurgeRequest, index: int, name: TableName, progress: NamespaceProgress
    ) -> list[int]:
        parent_id = progress.status.purge_id
        child = self._table_request(request, name)
        child_id = purge_id_for(child)
        progress.started(child_id, child.table_name, workflow.now())
        try:
            report: PurgeReport = await workflow.execute_child_workflow(
                WORKFLOW_TYPE,
                child.model_dump(mode="json"),
                id=child_id,
                result_type=PurgeReport,
                task_queue=workflow.info().task_queue,
                # A terminated namespace purge must not stop a table purge whose table is dropped.
                parent_close_policy=workflow.ParentClosePolicy.ABANDON,
                cancellation_type=workflow.ChildWorkflowCancellationType.WAIT_CANCELLATION_COMPLETED,
                id_reuse_policy=WorkflowIDReusePolicy.REJECT_DUPLICATE,
                static_summary=f"purge {child.table_name} (namespace purge {parent_id})",
                search_attributes=start_attributes(child, parent_id),
                task_timeout=TABLE_PURGE_TASK_TIMEOUT,
            )
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

    def _run_chain(self) -> str | None:
        """What tells this purge's state from an earlier or later purge under the same id."""
        return workflow.info().first_execution_run_id if self._run_scoped else None

    async def _drop_namespaces(
        self,
        request: NamespacePurgeRequest,
        tree: EnumerationSummary,
        progress: NamespaceProgress,
        preview: bool = False,
    ) -> None:
        """A preview (dry run) counts the namespaces the real purge would drop, dropping none."""
        status = progress.status
        if preview and self._kept.overflow:
            progress.skip(drops_not_previewed(request.name))
            return
        progress.move_to(NamespacePurgeState.DROPPING_NAMESPACES, workflow.now())
        result: DropNamespacesResult = await run_step(
            DROP_NAMESPACES,
            DropNamespacesInput(
                purge_id=status.purge_id,
                catalog=request.catalog,
                tree_location=tree.tree_location,
                preview=preview,
                kept_tables=self._kept.indices if preview else [],
            ),
        )
        progress.namespaces_dropped(result)


def _new_status(request: NamespacePurgeRequest) -> NamespacePurgeStatus:
    now = workflow.now()
    return NamespacePurgeStatus(
        purge_id=workflow.info().workflow_id,
        state=NamespacePurgeState.PENDING,
        catalog=request.catalog,
        namespace=request.namespace,
        recursive=request.walks_nested,
        requested_by=request.requested_by,
        request_id=request.request_id,
        dry_run=request.options.dry_run,
        max_concurrent_tables=request.max_concurrent_tables,
        bucket_requests_per_second=request.options.bucket_requests_per_second,
        started_at=now,
        updated_at=now,
    )
