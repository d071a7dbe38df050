"""A workflow that collects a purge's event signals; its own module so the sandbox imports
nothing but the contract models."""

from __future__ import annotations

from temporalio import workflow

from icepurge.contract.events import FINAL_EVENT_KINDS, PurgeEvent
from icepurge.contract.names import EVENT_SIGNAL


@workflow.defn(name="EventListener")
class EventListener:
    """Stands in for a catalog's own workflow that waits to hear how its purge ended."""

    def __init__(self) -> None:
        self._events: list[PurgeEvent] = []

    @workflow.signal(name=EVENT_SIGNAL)
    def on_event(self, event: PurgeEvent) -> None:
        self._events.append(event)

    @workflow.run
    async def run(self) -> list[PurgeEvent]:
        await workflow.wait_condition(lambda: any(event.kind in FINAL_EVENT_KINDS for event in self._events))
        return self._events
