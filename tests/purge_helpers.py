"""Building requests for test tables and running purges to their end."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from pyiceberg.table import Table
from temporalio.api.history.v1 import HistoryEvent
from temporalio.api.sdk.v1 import WorkflowMetadata
from temporalio.client import Client

from icepurge.api.clients.http_client import HttpPurgeClient
from icepurge.api.clients.listing import PurgeFilter
from icepurge.api.clients.temporal_client import PurgeClient
from icepurge.contract.counts import CONTENT_CATEGORIES, Category
from icepurge.contract.request import PurgeRequest
from icepurge.contract.states import PurgeState
from icepurge.contract.status import PurgeReport, PurgeStatus
from icepurge.devstack.requests import request_for_table
from icepurge.devstack.stack import EmbeddedStack

T = TypeVar("T")
# The Temporal SDK core's marker for a local activity's outcome.
LOCAL_ACTIVITY_MARKER = "core_local_activity"


def request_for(table: Table, properties: dict[str, str], **options: Any) -> PurgeRequest:
    return request_for_table("tests", table, properties, "pytest", **options)


async def purge(client: PurgeClient, request: PurgeRequest) -> PurgeReport:
    purge_id = await client.start(request)
    return await client.wait(purge_id)


def least_span_seconds(requests: int, per_second: float) -> float:
    """The shortest time `requests` requests can span when no second holds more than
    `per_second` of them (less a margin for loopback jitter)."""
    return (requests - 1) // int(per_second) - 0.5


async def status_when(
    client: PurgeClient | HttpPurgeClient, purge_id: str, condition: Callable[[PurgeStatus], bool]
) -> PurgeStatus:
    """Polls status until `condition` holds; fails if the purge ends first."""
    while True:
        status = await client.status(purge_id)
        if condition(status):
            return status
        assert status.finished_at is None, f"the purge ended before the condition held: {status}"
        await asyncio.sleep(0.1)


async def current_details(client: Client, purge_id: str) -> str:
    """The markdown the Web UI shows as the purge's current details."""
    handle = client.get_workflow_handle(purge_id)
    metadata: WorkflowMetadata = await handle.query(
        "__temporal_workflow_metadata", result_type=WorkflowMetadata
    )
    return str(metadata.current_details)


async def sealed_history(stack: EmbeddedStack, purge_id: str) -> bytes:
    """The purge's latest run's history as the server keeps it: read by a client without the
    payload codec, so sealed payloads stay sealed."""
    client = await Client.connect(stack.temporal_address)
    history = await client.get_workflow_handle(purge_id).fetch_history()
    return b"".join(event.SerializeToString() for event in history.events)


def assert_counts_add_up(status: PurgeStatus) -> None:
    """deleted + already_missing + failed + skipped equals the distinct planned set, per kind."""
    counts, planned = status.counts, status.planned
    content = sum(counts.of(category).done for category in CONTENT_CATEGORIES)
    assert content == planned.content_files, (content, planned)
    assert counts.of(Category.MANIFESTS).done == planned.manifests, (counts, planned)
    assert counts.of(Category.MANIFEST_LISTS).done == planned.manifest_lists, (counts, planned)
    assert counts.of(Category.METADATA_FILES).done == planned.metadata_files, (counts, planned)
    assert counts.of(Category.STATISTICS_FILES).done == planned.statistics_files, (counts, planned)
    assert status.files_done == planned.files


def assert_purged_exactly(status: PurgeStatus, owned: set[str], left: set[str]) -> None:
    """The purge succeeded, deleted each of the table's `owned` objects once, and `left` none."""
    assert status.state is PurgeState.SUCCEEDED, status
    assert_counts_add_up(status)
    assert status.counts.total().deleted == len(owned)
    assert left == set()


async def eventually(read: Callable[[], Awaitable[T]], check: Callable[[T], bool], seconds: float = 60) -> T:
    """Polls `read` until `check` holds on what it returned."""
    deadline = time.monotonic() + seconds
    while True:
        value = await read()
        if check(value):
            return value
        assert time.monotonic() < deadline, f"never got there: {value}"
        await asyncio.sleep(0.25)


async def children_of(purges: PurgeClient, parent: str) -> list[str]:
    """The table purges a namespace purge started (visibility, every page)."""
    found: list[str] = []
    token = None
    while True:
        page = await purges.list(PurgeFilter(parent=parent), page_size=50, page_token=token)
        found += [item.purge_id for item in page.items]
        if (token := page.next_page_token) is None:
            return found


async def activities_in_order(client: Client, purge_id: str) -> list[str]:
    """The activity types the purge's latest run scheduled, in order, local ones (run inside a
    workflow task) included."""
    history = await client.get_workflow_handle(purge_id).fetch_history()
    steps = []
    for event in history.events:
        if event.HasField("activity_task_scheduled_event_attributes"):
            steps.append(event.activity_task_scheduled_event_attributes.activity_type.name)
        elif (local := local_activity_type(event)) is not None:
            steps.append(local)
    return steps


def local_activity_type(event: HistoryEvent) -> str | None:
    """The type of the local activity whose marker `event` is (its result sealed by the codec;
    its description, read here, plain JSON), or None."""
    if event.marker_recorded_event_attributes.marker_name != LOCAL_ACTIVITY_MARKER:
        return None
    description = event.marker_recorded_event_attributes.details["data"].payloads[0].data
    kind: str = json.loads(description)["activity_type"]
    return kind
