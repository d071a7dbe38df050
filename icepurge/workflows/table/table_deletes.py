"""A run's deletes: planning (with chunks that start while it goes on), then the content chunks
in a sliding window, stopped and restarted by pause and budget changes, until every chunk ran or
the run should continue as new. Deterministic: activities and workflow conditions only."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from functools import partial

from temporalio import workflow
from temporalio.exceptions import ApplicationError

from icepurge.contract.activity_steps import CHUNK, PLAN
from icepurge.contract.express_steps import FinishResult
from icepurge.contract.names import PLAN_ACTIVITY, PLAN_AND_FINISH_ACTIVITY
from icepurge.contract.progress import Progress
from icepurge.contract.request import PurgeRequest
from icepurge.contract.states import PurgeState
from icepurge.contract.steps import ChunkInput, ChunkResult, ChunksReady, PlanInput, PlanSummary, chunk_step
from icepurge.workflows.shared.step_outcomes import cancel_all
from icepurge.workflows.shared.steps_runner import run_step
from icepurge.workflows.shared.upgrades import CHUNK_SHARES_OVER_CHUNKS_LEFT
from icepurge.workflows.table.chunk_window import ChunkTarget, ChunkWindow
from icepurge.workflows.table.express_lane import plan_and_finish
from icepurge.workflows.table.metrics import record_step
from icepurge.workflows.table.table_run import TableRun


class TableDeletes:
    def __init__(
        self, run: Callable[[], TableRun], check_live_tables: Callable[[list[str]], Awaitable[None]]
    ) -> None:
        self._run = run
        self._check_live_tables = check_live_tables
        # Set by pause and by a budget change: the running chunks stop and start again later.
        self._interrupt = False
        self._chunks = ChunkWindow(self._chunk, self._chunk_started, self._chunk_done)
        self._target: ChunkTarget | None = None
        # The most chunks planning has announced, while it runs.
        self._ready: ChunksReady | None = None
        # A small plan's guard, deletes and finalize, done by planning's own step.
        self.finished: FinishResult | None = None

    @property
    def next_chunk(self) -> int:
        return self._chunks.next_chunk

    def interrupt(self) -> None:
        self._interrupt = True

    def announce(self, ready: ChunksReady) -> None:
        if self._ready is None or ready.chunks > self._ready.chunks:
            self._ready = ready

    def resume_at(self, plan: PlanSummary, next_chunk: int) -> None:
        """A run continued as new picks up the plan where the last run left it."""
        self._chunks.next_chunk = next_chunk
        self._target = ChunkTarget(plan.plan_location, plan.engine, plan.chunk_count)

    async def plan(self, progress: Progress, overlap: bool, at_once: bool = False) -> PlanSummary:
        """With `overlap`, chunks planning announces start deleting while it goes on, once the
        live-table guard has passed: nothing stands between the plan and the deletes. With
        `at_once`, planning's step finishes a small plan itself (`finished`)."""
        progress.move_to(PurgeState.PLANNING, workflow.now())
        step = PlanInput(purge_id=progress.status.purge_id, request=self._run().request)
        planned = self._planned_and_finished(step) if at_once else run_step(PLAN, step)
        planning = asyncio.ensure_future(planned)
        try:
            if overlap:
                await self._delete_while_planning(planning, progress)
            plan: PlanSummary = await planning
        except (Exception, asyncio.CancelledError):
            await cancel_all([planning])
            await self._chunks.abandon()
            raise
        return self.adopt(plan, progress)

    async def _planned_and_finished(self, step: PlanInput) -> PlanSummary:
        planned = await plan_and_finish(step)
        self._run().progress.settled(PLAN_AND_FINISH_ACTIVITY)
        self.finished = planned.finish
        return planned.plan

    def adopt(self, plan: PlanSummary, progress: Progress) -> PlanSummary:
        """The plan is made: recorded in the status, and the chunks' target."""
        progress.settled(PLAN_ACTIVITY)
        progress.planned(plan, workflow.now())
        self._target = ChunkTarget(plan.plan_location, plan.engine, plan.chunk_count)
        record_step(plan.planning_counts, 0)
        return plan

    async def _delete_while_planning(self, planning: asyncio.Task[PlanSummary], progress: Progress) -> None:
        """A pause or a budget change stops the early chunks; they run again after the plan. No
        chunk starts here once the server suggests continuing as new (planning can't move to a
        new run): the rest wait for the plan, so history stays bounded."""
        options = self._run().request.options
        # A dry run deletes nothing: its guard is not applied, and its chunks need none.
        cleared = options.dry_run
        while not planning.done():
            ready = self._ready
            if ready is not None and not cleared:
                await self._check_live_tables(ready.locations)
                cleared = True
            if self._interrupt:
                self._interrupt = False
                await self._chunks.stop()
            if ready is not None and cleared and not progress.status.paused:
                self._target = ChunkTarget(ready.plan_location, ready.engine, None)
                progress.chunks_announced(ready.chunks)
                suggested = workflow.info().is_continue_as_new_suggested()
                limit = self._chunks.next_chunk if suggested else ready.chunks
                self._chunks.fill(options.chunk_window, limit)
            await workflow.wait_condition(partial(self._woken_while_planning, planning, ready))
            self._chunks.collect()

    def _woken_while_planning(self, planning: asyncio.Task[PlanSummary], seen: ChunksReady | None) -> bool:
        more = self._ready is not None and self._ready is not seen
        resumed = self._chunks.stopped and not self._run().progress.status.paused
        return planning.done() or more or resumed or self._interrupt or self._chunks.any_done()

    async def delete_chunks(self, plan: PlanSummary, progress: Progress) -> None:
        """Runs chunks in a sliding window until every one ran, or until the run should continue
        as new first (then `next_chunk` is below the chunk count)."""
        progress.move_to(PurgeState.DELETING, workflow.now())
        window = self._run().request.options.chunk_window
        try:
            while True:
                if self._interrupt:
                    self._interrupt = False
                    await self._chunks.stop()
                if progress.status.paused:
                    await self._stay_paused(progress)
                suggested = workflow.info().is_continue_as_new_suggested()
                self._chunks.fill(window, self._chunks.next_chunk if suggested else plan.chunk_count)
                if not self._chunks.running:
                    return
                await workflow.wait_condition(lambda: self._interrupt or self._chunks.any_done())
                self._chunks.collect()
        except asyncio.CancelledError:
            await self._chunks.abandon()
            raise

    async def _stay_paused(self, progress: Progress) -> None:
        progress.move_to(PurgeState.PAUSED, workflow.now())
        self._run().events.standing_still(news=True)
        await workflow.wait_condition(lambda: not progress.status.paused)
        progress.move_to(PurgeState.DELETING, workflow.now())

    def _chunk_done(self, result: ChunkResult) -> None:
        run = self._run()
        run.progress.settled(chunk_step(result.chunk_index))
        run.progress.chunk_done(result, workflow.now())
        record_step(result.counts, result.throttled_requests)
        run.events.progress()

    def _chunk_started(self, index: int) -> None:
        self._run().progress.chunk_started(index)

    async def _chunk(self, index: int) -> ChunkResult:
        target = self._target
        if target is None:
            raise ApplicationError("a chunk started before any chunk was ready", non_retryable=True)
        of = f"/{target.chunk_count}" if target.chunk_count is not None else " (while planning)"
        result: ChunkResult = await run_step(
            CHUNK,
            ChunkInput(
                purge_id=self._run().progress.status.purge_id,
                request=self._chunk_request(target),
                plan_location=target.plan_location,
                chunk_index=index,
                engine=target.engine,
            ),
            cancellation_type=workflow.ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
            summary=f"chunk {index + 1}{of}",
        )
        return result

    def _chunk_request(self, target: ChunkTarget) -> PurgeRequest:
        """The request as the chunk's engine reads it: its chunk window is how many chunks may run
        at once, the number each one's share of the budget is taken over. Once the plan is known,
        that is no more than the chunks left. Chunks started later take larger shares, never
        smaller, and when the last of those running started, no more ran than its share was
        taken over: the shares of those running never add up past the budget."""
        request = self._run().request
        if (
            target.chunk_count is None
            or request.options.bucket_requests_per_second is None
            or not workflow.patched(CHUNK_SHARES_OVER_CHUNKS_LEFT)
        ):
            return request
        at_once = min(request.options.chunk_window, self._chunks.unfinished(target.chunk_count))
        return request.with_options(chunk_window=at_once)
