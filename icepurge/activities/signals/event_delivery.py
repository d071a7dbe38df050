"""The deliver activity: hands a batch of events, in order, to every configured sink."""

from __future__ import annotations

import logging
from collections import Counter

from icepurge.activities.heartbeats import heartbeat
from icepurge.activities.signals.event_sinks import EventSink
from icepurge.activities.step_definition import implements
from icepurge.contract.activity_steps import DELIVER_EVENTS
from icepurge.contract.events import DeliveryReport, EventBatch

log = logging.getLogger(__name__)


class EventDelivery:
    def __init__(self, sinks: list[EventSink]) -> None:
        self._sinks = sinks

    @implements(DELIVER_EVENTS)
    def deliver_events(self, batch: EventBatch) -> DeliveryReport:
        """A sink's failure is counted, never raised: one bad sink mustn't hold back the others
        or the purge. Only a lost worker, or a first attempt inside the workflow task that ran out
        of time, makes the batch go out again (same event ids)."""
        undelivered: Counter[str] = Counter()
        for event in batch.events:
            for sink in self._sinks:
                try:
                    sink.deliver(event)
                # Sinks may be third-party code; whatever they raise is that sink's failure.
                except Exception as error:
                    undelivered[sink.name] += 1
                    log.warning("event %s not delivered to %s: %s", event.event_id, sink.name, error)
            heartbeat()
        return DeliveryReport(undelivered=dict(undelivered))
