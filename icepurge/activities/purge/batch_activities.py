"""The small-table batch activities (icepurge.contract.batch_steps): a batch's tables purged side
by side, one thread each. A table that meets a transient fault doesn't stop the others: they
finish and keep their records, then the batch fails its attempt and its retry answers for them at
once. A batch named by its tables (purge_table_batch, namespace purges started before slim
batches) answers with their reports; one named by its place in the table list (purge_range_batch)
reads their names there and answers with counts."""

from __future__ import annotations

from contextvars import copy_context
from functools import partial

from temporalio import activity
from temporalio.exceptions import ApplicationError, CancelledError

from icepurge.activities.catalog.table_catalog import Ancestry
from icepurge.activities.heartbeats import start_batch_beats
from icepurge.activities.namespace.table_lists import TableLists
from icepurge.activities.purge.batch_table import BatchTablePurge
from icepurge.activities.step_definition import implements
from icepurge.catalogs.guard_cohort import GuardCohort
from icepurge.contract.activity_steps import PURGE_RANGE_BATCH, PURGE_TABLE_BATCH
from icepurge.contract.batch_steps import (
    BatchTable,
    BatchTableOutcome,
    HandedBackTable,
    RangeBatchInput,
    RangeBatchResult,
    TableBatchInput,
    TableBatchResult,
)
from icepurge.contract.purge_id import purge_id_for
from icepurge.contract.table_outcomes import TableTallies, outcome_of_batch
from icepurge.stores.shared_threads import BoundedPool


class BatchActivities:
    def __init__(self, tables: BatchTablePurge, lists: TableLists) -> None:
        self._tables = tables
        self._lists = lists

    @implements(PURGE_TABLE_BATCH)
    def purge_table_batch(self, step: TableBatchInput) -> TableBatchResult:
        return TableBatchResult(outcomes=self._purge(step.tables))

    @implements(PURGE_RANGE_BATCH)
    def purge_range_batch(self, step: RangeBatchInput) -> RangeBatchResult:
        names = self._lists.names(step.tree_location, step.first, step.count)
        requests = [step.template.request_for(name) for name in names]
        tables = [BatchTable(purge_id=purge_id_for(request), request=request) for request in requests]
        outcomes = self._purge(tables, step.listed_under)
        tallies = TableTallies()
        handed_back = []
        for index, (name, table, outcome) in enumerate(zip(names, tables, outcomes, strict=True)):
            if outcome.report is None:
                why = outcome.handed_back or "handed back"
                handed_back.append(HandedBackTable(index=step.first + index, name=name, why=why))
                continue
            tallies.count(outcome_of_batch(table.purge_id, table.request.table_name, outcome.report))
        return RangeBatchResult(tallies=tallies, handed_back=handed_back)

    def _purge(self, tables: list[BatchTable], listed_under: str | None = None) -> list[BatchTableOutcome]:
        """Each table's outcome, in the order given; raises when any table met a transient fault
        (the others' records answer for them on the retry)."""
        retried = activity.info().attempt > 1
        start_batch_beats()
        outcomes: list[BatchTableOutcome] = []
        faults: list[Exception] = []
        # A thread a table: the guards' cohort holds each table at its guard until every other
        # one has reached its own or ended.
        with BoundedPool(len(tables)) as pool:
            # Each thread runs in a copy of this activity's context: heartbeats, cancellation and
            # activity.info() are this activity's.
            ancestry: Ancestry = {}
            parties = GuardCohort(len(tables)).parties()
            futures = [
                pool.submit(copy_context().run, partial(self._tables.run, table, retried, ancestry, party))
                for table, party in zip(tables, parties, strict=True)
            ]
            for future in futures:
                try:
                    outcomes.append(future.result())
                except CancelledError:
                    # The tables already running finish first (leaving the pool waits for them).
                    raise
                except Exception as error:
                    faults.append(error)
        parent_id = listed_under or activity.info().workflow_id
        if parent_id is not None:
            self._tables.list_recorded(parent_id, tables[0], outcomes)
        if faults:
            first = faults[0]
            kind = first.type if isinstance(first, ApplicationError) else type(first).__name__
            message = first.message if isinstance(first, ApplicationError) else str(first)
            raise ApplicationError(
                f"{len(faults)} of {len(tables)} tables met a fault and are retried with the batch "
                f"(the others are recorded and answer at once): {kind}: {message}",
                type=kind,
            )
        return outcomes
