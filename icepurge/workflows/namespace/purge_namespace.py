"""The PurgeNamespace workflow: enumerate a namespace tree (or a whole catalog) into the state
location, purge its tables by name as a sliding window of batches and PurgeTable children (or,
past one range of tables, of PurgeTableRange children that each run such a window), drop the
namespaces left empty (deepest first), report across the children.

Deterministic: no I/O; every side effect is an activity or a child workflow.
"""

from __future__ import annotations

import asyncio
from datetime import datetime, timedelta
from typing import Any, NoReturn

from pydantic import Field
from temporalio import workflow
from temporalio.exceptions import (
    ActivityError,
    ApplicationError,
    CancelledError,
    ChildWorkflowError,
)

from icepurge.contract.activity_steps import DROP_NAMESPACES, ENUMERATE
from icepurge.contract.events import EventCursor, EventKind, PurgeEvent
from icepurge.contract.names import (
    ERROR_INVALID_REQUEST,
    EVENT_SIGNAL,
    NAMESPACE_WORKFLOW_TYPE,
    RANGE_PROGRESS_SIGNAL,
    STATUS_QUERY,
)
from icepurge.contract.namespace_request import NamespacePurgeRequest, parse_namespace_request
from icepurge.contract.namespace_status import (
    NamespacePurgeReport,
    NamespacePurgeState,
    NamespacePurgeStatus,
)
from icepurge.contract.namespace_steps import (
    DropNamespacesInput,
    DropNamespacesResult,
    EnumerateInput,
    EnumerationSummary,
    TableName,
)
from icepurge.contract.range_steps import RangeProgress
from icepurge.contract.search_attributes import namespace_updates
from icepurge.contract.strict_model import StrictModel
from icepurge.workflows.namespace.namespace_controls import (
    check_namespace_budget,
    check_namespace_pause,
    check_namespace_resume,
)
from icepurge.workflows.namespace.namespace_details import namespace_details_markdown
from icepurge.workflows.namespace.namespace_events import NamespaceEvents
from icepurge.workflows.namespace.namespace_outcomes import (
    KeptTables,
    drops_not_previewed,
)
from icepurge.workflows.namespace.namespace_progress import NamespaceProgress, new_namespace_status
from icepurge.workflows.namespace.namespace_ranges import NamespaceRanges
from icepurge.workflows.namespace.namespace_tables import NamespaceRun
from icepurge.workflows.shared.control_handlers import ControlChecks, ControlHandlers
from icepurge.workflows.shared.event_stream import EventStream
from icepurge.workflows.shared.patches_first import decide_patches_first
from icepurge.workflows.shared.run_start import start_run
from icepurge.workflows.shared.step_outcomes import (
    error_memo,
    failure_reason,
    failure_type,
)
from icepurge.workflows.shared.steps_runner import run_step, run_step_in_task_first
from icepurge.workflows.shared.upgrades import (
    ENUMERATE_IN_WORKFLOW_TASK,
    NAMESPACE_PURGE_PATCHES,
    PREVIEW_DROPS,
    PROGRESS_ATTRIBUTES_INTERVAL,
    RANGE_PROGRESS_EVENTS,
    RUN_SCOPED_STATE,
    SLIM_BATCHES,
    TABLE_RANGES,
)

# Between a namespace purge's id and its run chain in its table purges' request ids.
CHILD_REQUEST_SEPARATOR = "@"
# Least time between two upserts of a namespace purge's search attributes as its tables progress
# (PROGRESS_ATTRIBUTES_INTERVAL): visibility's lists and filters lag it by no more than that, where
# the status query is exact. A state change goes at once.
PROGRESS_ATTRIBUTES_SECONDS = 5.0
# A walk of a SQL catalog lists ~100,000 tables a second (bench/results/enumeration.txt): a tree
# of up to a few hundred thousand tables, or a selection that loads a few hundred, is enumerated
# inside the first workflow task. A longer walk gives up this much and goes on as the activity,
# whose heartbeats show its progress; meanwhile the workflow answers no query.
ENUMERATE_IN_TASK_TIMEOUT = timedelta(seconds=5)


class CarriedNamespaceState(StrictModel):
    """What one run hands the next through continue-as-new: no table names, whatever the tree."""

    status: NamespacePurgeStatus
    tree: EnumerationSummary
    next_table: int
    events: EventCursor
    kept: KeptTables = Field(default_factory=KeptTables)


NAMESPACE_CONTROL_CHECKS = ControlChecks(
    check_namespace_pause, check_namespace_resume, check_namespace_budget
)


def _cutoff_ms(request: NamespacePurgeRequest) -> int | None:
    """A table last committed before this is old enough for the selection's older_than."""
    age = request.selection.age if request.selection else None
    return int((workflow.now() - age).timestamp() * 1000) if age else None


@workflow.defn(name=NAMESPACE_WORKFLOW_TYPE)
class PurgeNamespaceWorkflow(NamespaceRanges, ControlHandlers[NamespacePurgeStatus]):
    @workflow.init
    def __init__(self, request: dict[str, Any], carried: CarriedNamespaceState | None = None) -> None:
        self._page: list[TableName] = []
        self._page_offset = 0
        self._run_scoped = False
        self._slim = False
        self._kept = carried.kept if carried else KeptTables()
        # Tables purged inside a batch: no workflow of theirs to signal a control to.
        self._in_batches: set[str] = set()
        self._tables_left: int | None = None
        self._ranges: dict[int, str] = {}
        self._range_slots: int | None = None
        self._invalid: str | None = None
        self._run: NamespaceRun | None = None
        # Set by the run (PROGRESS_ATTRIBUTES_INTERVAL); a handler that comes before it publishes as before.
        self._attributes_every_interval = False
        self._indexed_at: datetime | None = None
        start = start_run(request, parse_namespace_request, carried, new_namespace_status, NamespaceEvents)
        if isinstance(start, str):
            self._invalid = start
            return
        self._run = NamespaceRun(start.request, NamespaceProgress(start.status, self._publish), start.events)

    @workflow.query(name=STATUS_QUERY)
    def status(self) -> NamespacePurgeStatus:
        return self._namespace_run().progress.status

    def _publish(self, status: NamespacePurgeStatus) -> None:
        workflow.upsert_search_attributes(namespace_updates(status))
        workflow.set_current_details(namespace_details_markdown(status))
        self._indexed_at = workflow.now()

    def _progress_published(self) -> None:
        """The details show the tables' progress at once; the search attributes at most once an
        interval, so a purge of many short rounds writes visibility (and its history) a few times a
        minute, not once a round. What the interval holds back goes with the next news: a round, a
        table purge's event, a range's progress, a state change."""
        progress = self._namespace_run().progress
        if not self._attributes_every_interval:
            progress.publish()
            return
        last = self._indexed_at
        if last is None or workflow.now() - last >= timedelta(seconds=PROGRESS_ATTRIBUTES_SECONDS):
            progress.publish()
        else:
            workflow.set_current_details(namespace_details_markdown(progress.status))

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

    async def _control_running(self) -> None:
        await self._control_tables()
        await self._control_ranges()

    @workflow.signal(name=EVENT_SIGNAL)
    def table_event(self, event: PurgeEvent) -> None:
        """Each table purge signals its events here: the running ones' counts stay live."""
        if self._run is not None:
            self._run.progress.event(event, workflow.now())
            if self._run.progress.status.paused:
                self._events().standing_still(news=True)
            if self._attributes_every_interval:
                self._progress_published()

    @workflow.signal(name=RANGE_PROGRESS_SIGNAL)
    def range_progress(self, progress: RangeProgress) -> None:
        """Each range of the tree signals its tallies so far: the status counts them live, and the
        events tell them (at most every progress interval), as a flat purge's rounds do; a tree's
        own rounds end only as a range ends, minutes apart."""
        if self._run is not None:
            self._run.progress.range_progressed(progress, workflow.now())
            if workflow.patched(RANGE_PROGRESS_EVENTS):
                self._events_progressed()
            if self._attributes_every_interval:
                self._progress_published()

    def _root_id(self) -> str:
        return self._namespace_run().progress.status.purge_id

    def _table_request_id(self) -> str:
        """The id and run chain: one purge per table per namespace purge, whatever retries,
        replays or continue-as-new happen, and a new one when the namespace is purged again after
        this purge closed."""
        purge_id, chain = self._root_id(), self._run_chain()
        return f"{purge_id}{CHILD_REQUEST_SEPARATOR}{chain}" if chain else purge_id

    async def _units_progressed(self) -> None:
        self._events_progressed()

    def _events_progressed(self) -> None:
        self._events().progress(standing_still=self._namespace_run().progress.status.paused)

    def _events(self) -> EventStream:
        events = self._namespace_run().events
        if events is None:
            raise ApplicationError("a namespace purge always has its event stream", non_retryable=True)
        return events

    @workflow.run
    async def run(
        self, request: dict[str, Any], carried: CarriedNamespaceState | None = None
    ) -> NamespacePurgeReport:
        decide_patches_first(NAMESPACE_PURGE_PATCHES)
        self._run_scoped = workflow.patched(RUN_SCOPED_STATE)
        self._slim = workflow.patched(SLIM_BATCHES)
        self._attributes_every_interval = workflow.patched(PROGRESS_ATTRIBUTES_INTERVAL)
        if self._run is None:
            raise ApplicationError(str(self._invalid), type=ERROR_INVALID_REQUEST, non_retryable=True)
        parsed, progress, events = self._run.request, self._run.progress, self._events()
        status = progress.status
        events.start()
        if carried:
            progress.next_run()
        else:
            events.emit(EventKind.STARTED)
        progress.publish()
        try:
            tree = carried.tree if carried else await self._enumerate(parsed, progress)
            first = carried.next_table if carried else 0
            next_table = await self._purge_from(parsed, tree, first)
            if next_table < tree.tables_total:
                await events.close_for_next_run()
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
        except (ActivityError, ChildWorkflowError) as error:
            # A step failed, or a range of the tree did (as a failed step would).
            if isinstance(error.cause, CancelledError):
                await self._stop_cancelled()
                raise
            await self._fail(failure_reason(error), failure_type(error))
        except asyncio.CancelledError:
            await self._stop_cancelled()
            raise

    async def _purge_from(self, request: NamespacePurgeRequest, tree: EnumerationSummary, first: int) -> int:
        if not self._slim:
            return await self._purge_tables(request, tree, first)
        if workflow.patched(TABLE_RANGES) and self._is_tree(request, tree):
            return await self._purge_ranges(request, tree, first)
        return await self._purge_units(request, tree, first, tree.tables_total)

    async def _close(self, final: EventKind) -> None:
        """The last event, delivered; then no handler is left half-way when the run ends."""
        events = self._events()
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
        step = EnumerateInput(
            purge_id=status.purge_id,
            catalog=request.catalog,
            namespace=request.namespace,
            nested=request.walks_nested,
            run_chain=self._run_chain(),
            selection=request.selection,
            cutoff_ms=_cutoff_ms(request),
        )
        if workflow.patched(ENUMERATE_IN_WORKFLOW_TASK):
            tree = await run_step_in_task_first(ENUMERATE, step, ENUMERATE_IN_TASK_TIMEOUT)
        else:
            tree = await run_step(ENUMERATE, step)
        progress.enumerated(tree)
        return tree

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
