"""The express lane's finish, once the table is dropped: the live-table guard, the chunks and
finalize back to back in one activity (finish_small_purge), or for a table of a batch."""

from __future__ import annotations

from contextvars import copy_context

from temporalio import activity

from icepurge.activities.catalog.catalog_retries import bounded
from icepurge.activities.catalog.table_catalog import TableCatalog
from icepurge.activities.purge.purge_services import PurgeServices
from icepurge.catalogs.guard_cohort import GuardParty
from icepurge.contract.catalog_steps import GuardInput, TableRef, guard_not_applied
from icepurge.contract.express_steps import ExpressSteps, FinishInput, FinishResult
from icepurge.contract.request import Engine, PurgeRequest
from icepurge.contract.status import GuardOutcome
from icepurge.contract.steps import ChunkCheckpoint, ChunkInput, ChunkResult, FinalizeInput
from icepurge.stores.shared_threads import BoundedPool


def side_by_side(request: PurgeRequest, chunk_count: int) -> tuple[int, PurgeRequest]:
    """How many of a plan's chunks run at once, and the request each chunk's engine reads: its
    chunk window, which the budget is shared over, says how many run, not how many could."""
    window = max(min(request.options.chunk_window, chunk_count), 1)
    return window, request.with_options(chunk_window=window)


class ExpressFinish:
    def __init__(self, services: PurgeServices, catalogs: TableCatalog) -> None:
        self._services = services
        self._catalogs = catalogs

    def finish(self, step: FinishInput, party: GuardParty | None = None) -> FinishResult:
        """A batch's table is a `party` of the batch's guards."""
        plan = step.plan
        # Only a retry can find a finish that completed before it.
        recorded = (
            self._services.finalizing.express_record(plan.plan_location)
            if activity.info().attempt > 1
            else None
        )
        if recorded is not None:
            return recorded
        request = step.request
        guard = bounded(lambda: self._guard(step.purge_id, request, step.plan.locations, party))
        if not guard.passed:
            return FinishResult(guard=guard)
        with self._services.planning.holding_plan(plan):
            return self._delete_and_finalize(step, guard)

    def _delete_and_finalize(self, step: FinishInput, guard: GuardOutcome) -> FinishResult:
        plan, request = step.plan, step.request
        counts = plan.planning_counts.model_copy(deep=True)
        chunks = self._chunks(step)
        for chunk in chunks:
            counts.add(chunk.counts)
        steps = ExpressSteps(guard=guard, chunks=chunks, plan=plan.model_copy(update={"held": None}))
        finalize = self._services.finalizing.finalize(
            FinalizeInput(
                purge_id=step.purge_id,
                request=request,
                plan_location=plan.plan_location,
                chunk_count=plan.chunk_count,
                keep_metadata_chain=any(chunk.failures_total for chunk in chunks),
                counts_so_far=counts,
                guards=[*step.guards, guard],
            ),
            steps,
        )
        return FinishResult(**steps.model_dump(), finalize=finalize)

    def _chunks(self, step: FinishInput) -> list[ChunkResult]:
        """The chunks side by side, as many at once as the request's chunk window lets the
        step-by-step path run (each resumes from its own outcome object on a retry)."""
        indexes = range(step.plan.chunk_count)
        window, request = side_by_side(step.request, step.plan.chunk_count)

        def delete(index: int) -> ChunkResult:
            chunk = ChunkInput(
                purge_id=step.purge_id,
                request=request,
                plan_location=step.plan.plan_location,
                chunk_index=index,
                engine=Engine.LOCAL,
            )
            return self._services.chunks.delete_chunk_from(chunk, ChunkCheckpoint(), signalling=False)

        if window <= 1:
            return [delete(index) for index in indexes]
        with BoundedPool(window) as pool:
            # Each chunk runs in its own copy of this activity's context, taken here on the
            # activity's thread: heartbeats, cancellation and activity.info() are this activity's.
            running = [pool.submit(copy_context().run, delete, index) for index in indexes]
            return [chunk.result() for chunk in running]

    def _guard(
        self, purge_id: str, request: PurgeRequest, locations: list[str], party: GuardParty | None
    ) -> GuardOutcome:
        if not request.options.live_table_guard:
            return guard_not_applied("turned off by options.live_table_guard")
        return self._catalogs.guard(
            GuardInput(
                table=TableRef.of(purge_id, request),
                metadata_location=request.snapshot_location(),
                locations=locations,
                scope=request.options.overlap_scope,
            ),
            party,
        )
