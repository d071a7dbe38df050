"""Delivers a purge's events in order, beside the purge rather than in its way.

Events queue in the workflow; one pump sends them in batches to the worker's sinks (the
deliver activity) and, if the request names one, as signals to the caller's own workflow. A
batch waits for the previous one, so receivers see the emission order. A sink that is down
costs the pump time, never the purge: only the final event is waited for, and the sinks bound
their own retries."""

from __future__ import annotations

import asyncio
from datetime import datetime, timedelta
from typing import Protocol

from temporalio import workflow
from temporalio.exceptions import ActivityError, FailureError

from icepurge.contract.activity_steps import DELIVER_EVENTS
from icepurge.contract.events import EventBatch, EventCursor, EventKind, PurgeEvent
from icepurge.contract.names import EVENT_SIGNAL, NAMESPACE_ID_PREFIX
from icepurge.workflows.shared.held_back import HeldBack
from icepurge.workflows.shared.patches_first import decide_patches_first
from icepurge.workflows.shared.steps_runner import run_step, run_step_in_task_first
from icepurge.workflows.shared.upgrades import (
    FINAL_EVENTS_IN_WORKFLOW_TASK,
    PARENT_SIGNALS,
    PAUSED_PROGRESS_TOLD,
)

# A namespace purge learns these of a table purge from the child workflow's own start and result
# (its report): signalling them too cost the parent's workflow, whose tasks run one at a time,
# two more tasks per table.
KNOWN_TO_THE_PARENT = frozenset({EventKind.STARTED, EventKind.COMPLETED, EventKind.COMPLETED_WITH_ERRORS})
# The events a closing run waits for go first inside its workflow task (FINAL_EVENTS_IN_WORKFLOW_TASK):
# healthy sinks take a batch in milliseconds. A sink slower than this costs the close this much
# more, and the sinks the attempt reached get the batch again (the same event ids) from the activity.
FINAL_DELIVERY_IN_TASK_TIMEOUT = timedelta(seconds=2)


class EventSource(Protocol):
    """The purge an event stream speaks for: a table purge or a namespace purge."""

    def event(self, kind: EventKind, cursor: EventCursor, run_id: str, now: datetime) -> PurgeEvent: ...

    def undelivered(self, count: int) -> None: ...


class EventStream:
    def __init__(
        self,
        source: EventSource,
        cursor: EventCursor,
        progress_interval: timedelta,
        notify_workflow_id: str | None,
    ) -> None:
        self._source = source
        self._cursor = cursor
        self._notify_workflow_id = notify_workflow_id
        self._pending: list[PurgeEvent] = []
        self._closing = False
        self._pump: asyncio.Task[None] | None = None
        # Progress held back by the interval since the last progress event; its timer tells it
        # while the purge stands still.
        self._held = False
        self._held_back = HeldBack(progress_interval)

    @classmethod
    def for_run(
        cls,
        source: EventSource,
        carried: EventCursor | None,
        progress_event_seconds: float,
        notify_workflow_id: str | None,
    ) -> EventStream:
        """A run's stream: it goes on from the cursor the last run carried, or opens the chain."""
        cursor = carried or EventCursor(chain_id=workflow.info().first_execution_run_id)
        return cls(source, cursor, timedelta(seconds=progress_event_seconds), notify_workflow_id)

    @property
    def cursor(self) -> EventCursor:
        return self._cursor

    def start(self) -> None:
        self._pump = asyncio.create_task(self._run())

    def emit(self, kind: EventKind) -> None:
        now = workflow.now()
        self._pending.append(self._source.event(kind, self._cursor, workflow.info().run_id, now))
        self._cursor.next_sequence += 1
        if kind is EventKind.PROGRESS:
            self._cursor.last_progress_at = now
            self._held = False

    def progress(self, standing_still: bool = False) -> None:
        """Emits a progress event unless one went out less than the interval ago, or the stream
        is closing: a late chunk signal must not follow the final event. A purge `standing_still`
        (paused) has what the interval held back told once it is up."""
        if self._closing:
            return
        if self._held_back.left(self._cursor.last_progress_at) <= timedelta(0):
            self.emit(EventKind.PROGRESS)
        else:
            self._held = True
        if standing_still:
            self.standing_still()

    def standing_still(self, news: bool = False) -> None:
        """The purge stands paused: progress the interval held back (or `news`, such as the pause
        itself) goes once the interval is up, as nothing later would tell it."""
        if self._closing or self._held_back.armed or not (self._held or news):
            return
        if not workflow.patched(PAUSED_PROGRESS_TOLD):
            return
        wait = self._held_back.left(self._cursor.last_progress_at)
        if wait <= timedelta(0):
            self.emit(EventKind.PROGRESS)
        else:
            self._held_back.arm(wait, self._tell_held)

    async def _tell_held(self) -> None:
        self.progress()

    def retrying(self) -> None:
        """A step's attempt failed: an event, unless the stream is closing (then the final event,
        or the next run's stream, tells the rest)."""
        if not self._closing:
            self.emit(EventKind.RETRYING)

    async def close_for_next_run(self) -> None:
        """The run continues as new: progress the interval held back goes first, as the next run
        may start paused, with nothing to tell."""
        if self._held and not self._closing and workflow.patched(PAUSED_PROGRESS_TOLD):
            self.emit(EventKind.PROGRESS)
        await self.close()

    async def close(self) -> None:
        """Returns once every emitted event has been handed to every sink (or given up on)."""
        self._closing = True
        if self._pump is not None:
            await self._pump

    async def _run(self) -> None:
        while True:
            await workflow.wait_condition(lambda: bool(self._pending) or self._closing)
            if not self._pending:
                return
            batch, self._pending = self._pending, []
            await self._deliver(batch)

    async def _deliver(self, batch: list[PurgeEvent]) -> None:
        summary = f"events {batch[0].sequence}-{batch[-1].sequence}"
        events = EventBatch(events=batch)
        try:
            # The run waits for what it delivers once closing: the task that delivers it ends it.
            if self._closing and workflow.patched(FINAL_EVENTS_IN_WORKFLOW_TASK):
                if self._tells_parent_news_only():
                    decide_patches_first([PARENT_SIGNALS])
                report = await run_step_in_task_first(
                    DELIVER_EVENTS, events, FINAL_DELIVERY_IN_TASK_TIMEOUT, summary=summary
                )
            else:
                report = await run_step(DELIVER_EVENTS, events, summary=summary)
            self._source.undelivered(sum(report.undelivered.values()))
        except ActivityError:
            self._source.undelivered(len(batch))
        if self._notify_workflow_id:
            await self._signal(self._notify_workflow_id, self._news_for_target(batch))

    def _tells_parent_news_only(self) -> bool:
        """The target is the namespace purge that started this table purge."""
        parent = workflow.info().parent
        return (
            parent is not None
            and parent.workflow_id == self._notify_workflow_id
            and parent.workflow_id.startswith(NAMESPACE_ID_PREFIX)
        )

    def _news_for_target(self, batch: list[PurgeEvent]) -> list[PurgeEvent]:
        """Every event, unless the target is the namespace purge that started this table purge."""
        if not self._tells_parent_news_only() or not workflow.patched(PARENT_SIGNALS):
            return batch
        # Progress sent with the report's own event is overtaken by the report at once.
        reported = any(event.kind in KNOWN_TO_THE_PARENT - {EventKind.STARTED} for event in batch)
        return [
            event
            for event in batch
            if event.kind not in KNOWN_TO_THE_PARENT and not (reported and event.kind is EventKind.PROGRESS)
        ]

    async def _signal(self, workflow_id: str, batch: list[PurgeEvent]) -> None:
        target = workflow.get_external_workflow_handle(workflow_id)
        for sent, event in enumerate(batch):
            try:
                await target.signal(EVENT_SIGNAL, event)
            # The listener may be gone or never have existed; the purge goes on regardless.
            except FailureError:
                self._source.undelivered(len(batch) - sent)
                return
