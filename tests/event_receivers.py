"""A sink loaded by import path, as a user would write one, and a reader for the log sink's
lines (the webhook receiver is icepurge/devstack/webhook_receiver.py, the listener workflow
tests/listener_workflow.py)."""

from __future__ import annotations

import json

from icepurge.contract.events import PurgeEvent

RECORDED: list[PurgeEvent] = []


class RecordingSink:
    """A third-party sink as a user would write one, loaded as 'tests.event_receivers:RecordingSink'."""

    name = "recording"

    def deliver(self, event: PurgeEvent) -> None:
        RECORDED.append(event)


def json_lines(text: str) -> list[dict[str, object]]:
    """The lines of a log that are JSON objects (the log sink's events)."""
    found = []
    for line in text.splitlines():
        if line.startswith("{"):
            found.append(json.loads(line))
    return found
