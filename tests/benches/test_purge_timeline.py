"""The benches count a purge's history events from the histories they read, not from the
visibility listing: a run just closed can still be listed with a history length of 0
(compare_engines printed 0 events for a rewrite-heavy purge that way)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import cast

from temporalio.api.enums.v1 import EventType
from temporalio.api.history.v1 import HistoryEvent
from temporalio.client import Client

from bench.purge_timeline import purge_timeline, run_events
from icepurge.contract.names import CHUNK_ACTIVITY
from tests.benches.built_histories import History


@dataclass
class _Listed:
    run_id: str
    history_length: int


@dataclass
class _Fetched:
    events: list[HistoryEvent]


class _Run:
    def __init__(self, events: list[HistoryEvent]) -> None:
        self._events = events

    async def fetch_history(self) -> _Fetched:
        return _Fetched(self._events)


class _LaggingVisibility:
    """Lists each run as the visibility store does before it has taken the run's close."""

    def __init__(self, runs: dict[str, list[HistoryEvent]]) -> None:
        self._runs = runs

    async def list_workflows(self, query: str) -> AsyncIterator[_Listed]:
        for run_id in self._runs:
            yield _Listed(run_id, history_length=0)

    def get_workflow_handle(self, workflow_id: str, *, run_id: str) -> _Run:
        return _Run(self._runs[run_id])


def _lagging() -> _LaggingVisibility:
    first, second = History(), History()
    first.add(0.0, EventType.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED)
    first.activity(CHUNK_ACTIVITY, scheduled=0.1, started=0.1, closed=0.5)
    first.add(0.6, EventType.EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW)
    second.add(0.7, EventType.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED)
    second.add(0.8, EventType.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED)
    return _LaggingVisibility({"run-1": first.events, "run-2": second.events})


async def test_the_timeline_counts_the_events_of_every_runs_history() -> None:
    timeline = await purge_timeline(cast(Client, _lagging()), "purge")

    assert timeline.events == 5 + 2
    assert timeline.seconds(CHUNK_ACTIVITY) > 0


async def test_each_runs_events_are_read_from_its_history() -> None:
    assert await run_events(cast(Client, _lagging()), "purge") == [5, 2]
