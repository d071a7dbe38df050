"""The small-table batch activity (icepurge.contract.batch_steps): its tables purged side by side,
one thread each. A table that meets a transient fault doesn't stop the others: they finish and
keep their records, then the batch fails its attempt and its retry answers for them at once."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from contextvars import copy_context
from functools import partial
from typing import Any

from temporalio import activity
from temporalio.exceptions import ApplicationError, CancelledError

from icepurge.activities.catalog.table_catalog import Ancestry
from icepurge.activities.heartbeats import start_batch_beats
from icepurge.activities.purge.batch_table import BatchTablePurge
from icepurge.activities.step_definition import implements
from icepurge.catalogs.guard_cohort import GuardCohort
from icepurge.contract.activity_steps import PURGE_TABLE_BATCH
from icepurge.contract.batch_steps import BatchTableOutcome, TableBatchInput, TableBatchResult


class BatchActivities:
    def __init__(self, tables: BatchTablePurge) -> None:
        self._tables = tables

    @property
    def all(self) -> list[Callable[..., Any]]:
        return [self.purge_table_batch]

    @implements(PURGE_TABLE_BATCH)
    def purge_table_batch(self, step: TableBatchInput) -> TableBatchResult:
        retried = activity.info().attempt > 1
        start_batch_beats()
        outcomes: list[BatchTableOutcome] = []
        faults: list[Exception] = []
        # A thread a table: the guards' cohort holds each table at its guard until every other
        # one has reached its own or ended.
        with ThreadPoolExecutor(max_workers=len(step.tables), thread_name_prefix="table-batch") as pool:
            # Each thread runs in a copy of this activity's context: heartbeats, cancellation and
            # activity.info() are this activity's.
            ancestry: Ancestry = {}
            parties = GuardCohort(len(step.tables)).parties()
            futures = [
                pool.submit(copy_context().run, partial(self._tables.run, table, retried, ancestry, party))
                for table, party in zip(step.tables, parties, strict=True)
            ]
            for future in futures:
                try:
                    outcomes.append(future.result())
                except CancelledError:
                    # The tables already running finish first (leaving the pool waits for them).
                    raise
                except Exception as error:
                    faults.append(error)
        parent_id = activity.info().workflow_id
        if parent_id is not None:
            self._tables.list_recorded(parent_id, step.tables[0], outcomes)
        if faults:
            first = faults[0]
            kind = first.type if isinstance(first, ApplicationError) else type(first).__name__
            message = first.message if isinstance(first, ApplicationError) else str(first)
            raise ApplicationError(
                f"{len(faults)} of {len(step.tables)} tables met a fault and are retried with the batch "
                f"(the others are recorded and answer at once): {kind}: {message}",
                type=kind,
            )
        return TableBatchResult(outcomes=outcomes)
