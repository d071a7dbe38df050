"""A purge's events reach every sink in order: a real HTTP receiver (signed), a sink loaded by
import path, the JSON log and a listener workflow; also across continue-as-new and a killed
worker, and without a failing receiver slowing the purge down."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import timedelta
from functools import partial
from uuid import uuid4

import pytest
from pyiceberg.catalog.sql import SqlCatalog
from temporalio.api.enums.v1 import EventType
from temporalio.client import Client

from icepurge.api.clients.errors import PurgeFailedError
from icepurge.api.clients.temporal_client import PurgeClient
from icepurge.contract.counts import Category, FileCounts
from icepurge.contract.events import EventKind, PurgeEvent
from icepurge.contract.names import (
    CHUNK_PROGRESS_SIGNAL,
    ERROR_METADATA_NOT_FOUND,
    FINALIZE_ACTIVITY,
    PLAN_AND_FINISH_ACTIVITY,
)
from icepurge.contract.states import PurgeState
from icepurge.contract.status import PurgeReport
from icepurge.contract.steps import ChunkProgress
from icepurge.devstack.free_ports import free_ports
from icepurge.devstack.process import ServiceProcess
from icepurge.devstack.s3_proxy import s3_proxy, through_proxy
from icepurge.devstack.stack import EmbeddedStack
from icepurge.devstack.webhook_receiver import WEBHOOK_SECRET, webhook_receiver
from icepurge.worker.run import activity_pool, build_worker
from icepurge.worker.settings import WorkerSettings
from tests.conftest import LISTENER_QUEUE
from tests.event_receivers import RECORDED, json_lines
from tests.listener_workflow import EventListener
from tests.metrics_scrape import metric_sum, scrape
from tests.purge_helpers import eventually, request_for, status_when
from tests.store import S3Store
from tests.tables import many_files_table, simple_table


def _in_order(events: list[PurgeEvent]) -> list[PurgeEvent]:
    """The sequence a receiver keeps after dropping redeliveries by event id; asserts that a
    redelivery is the same event and that nothing arrived out of order."""
    first_seen: dict[str, PurgeEvent] = {}
    kept: list[PurgeEvent] = []
    for event in events:
        seen = first_seen.get(event.event_id)
        if seen is not None:
            assert seen == event, "a redelivered event id carried different content"
            continue
        first_seen[event.event_id] = event
        kept.append(event)
    assert [event.sequence for event in kept] == list(range(len(kept))), "events missing or out of order"
    return kept


def _assert_full_sequence(events: list[PurgeEvent], report: PurgeReport) -> None:
    assert events[0].kind is EventKind.STARTED
    assert events[-1].kind is EventKind.COMPLETED
    assert all(event.kind is EventKind.PROGRESS for event in events[1:-1])
    assert len(events) >= 3, "a purge of several seconds sends progress events"
    assert {event.purge_id for event in events} == {report.status.purge_id}
    done = [event.files_done for event in events]
    assert done == sorted(done)
    assert events[-1].state is PurgeState.SUCCEEDED
    assert events[-1].files_deleted == report.status.counts.total().deleted
    assert events[-1].files_done == report.status.files_done
    assert len({event.event_id.rsplit(":", 1)[0] for event in events}) == 1


@asynccontextmanager
async def _in_process_worker(
    temporal_client: Client, worker_settings: WorkerSettings, url: str
) -> AsyncIterator[PurgeClient]:
    """A worker on its own queue whose sinks are the log, the webhook at `url` and a sink loaded
    by import path."""
    queue = f"icepurge-events-{uuid4().hex[:6]}"
    settings = WorkerSettings.model_validate(
        {
            **worker_settings.model_dump(),
            "state_io_properties": worker_settings.state_io_properties,
            "task_queue": queue,
            "event_sinks": ["log", "webhook", "tests.event_receivers:RecordingSink"],
            "webhook_url": url,
            "webhook_secret": WEBHOOK_SECRET,
        }
    )
    with activity_pool(settings) as pool:
        async with build_worker(temporal_client, settings, pool):
            yield PurgeClient(temporal_client, queue)


@pytest.mark.usefixtures("listener")
async def test_every_sink_gets_the_ordered_events_across_continue_as_new(
    catalog: SqlCatalog,
    temporal_client: Client,
    worker_settings: WorkerSettings,
    s3: S3Store,
    stack: EmbeddedStack,
) -> None:
    table = many_files_table(catalog, ("events",), "ordered", manifests=12, files=20)
    with webhook_receiver() as (url, received), s3_proxy(stack.ports.s3) as (port, faults):
        async with _in_process_worker(temporal_client, worker_settings, url) as purges:
            faults.delete_delay = 0.3
            listener_id = f"listener-{table.name()[-1]}"
            listening = await temporal_client.start_workflow(
                EventListener.run, id=listener_id, task_queue=LISTENER_QUEUE
            )
            request = request_for(
                table,
                through_proxy(s3.properties, port),
                progress_event_seconds=1,
                chunk_window=1,
                express_lane=False,
            ).model_copy(update={"notify_workflow_id": listener_id})
            purge_id = await purges.start(request)
            report = await asyncio.wait_for(purges.wait(purge_id), timeout=240)
            signalled = await asyncio.wait_for(listening.result(), timeout=30)

    assert report.status.run_count > 1, "the table is big enough to continue as new"
    assert report.status.events_undelivered == 0
    assert report.status.counts.of(Category.DATA_FILES).deleted == 12 * 20
    webhook = _in_order(received.events())
    _assert_full_sequence(webhook, report)
    assert all(received.signatures_valid)
    assert received.header_ids == [event.event_id for event in received.events()]
    assert _in_order([event for event in RECORDED if event.purge_id == purge_id]) == webhook
    assert _in_order(signalled) == webhook
    assert len({event.run_id for event in webhook}) > 1, "events came from more than one run"
    secret = s3.properties["s3.secret-access-key"]
    assert all(secret not in body.decode() for body in received.bodies)


async def test_a_cancelled_and_a_failed_purge_end_their_sequences_so(
    catalog: SqlCatalog,
    temporal_client: Client,
    worker_settings: WorkerSettings,
    s3: S3Store,
    stack: EmbeddedStack,
) -> None:
    table = many_files_table(catalog, ("events",), "cancelled", manifests=6, files=20)
    missing = request_for(table, s3.properties).model_copy(
        update={"metadata_location": f"{table.location()}/metadata/00099-gone.metadata.json"}
    )
    with webhook_receiver() as (url, received), s3_proxy(stack.ports.s3) as (port, faults):
        async with _in_process_worker(temporal_client, worker_settings, url) as purges:
            faults.delete_delay = 0.5
            cancelled_id = await purges.start(
                request_for(table, through_proxy(s3.properties, port), chunk_window=1)
            )
            await faults.deletes_reached(1)
            await purges.cancel(cancelled_id)
            failed_id = await purges.start(missing)
            for purge_id in (cancelled_id, failed_id):
                with pytest.raises(PurgeFailedError):
                    await asyncio.wait_for(purges.wait(purge_id), timeout=120)

    cancelled = _in_order([event for event in received.events() if event.purge_id == cancelled_id])
    assert [cancelled[0].kind, cancelled[-1].kind] == [EventKind.STARTED, EventKind.CANCELLED]
    assert cancelled[-1].state is PurgeState.CANCELLED
    failed = _in_order([event for event in received.events() if event.purge_id == failed_id])
    assert [event.kind for event in failed] == [EventKind.STARTED, EventKind.FAILED]
    assert failed[-1].error_type == ERROR_METADATA_NOT_FOUND
    assert failed[-1].error is not None and "00099-gone.metadata.json" in failed[-1].error


async def test_no_event_follows_the_final_one(
    catalog: SqlCatalog, temporal_client: Client, worker_settings: WorkerSettings, s3: S3Store
) -> None:
    """A chunk's progress signal arriving while the final event is being delivered (here sent by
    hand, as a late one would be) must not add an event after it."""
    table = simple_table(catalog, ("events",), "late_signal")
    with webhook_receiver() as (url, received):
        received.delay = 2.0
        async with _in_process_worker(temporal_client, worker_settings, url) as purges:
            purge_id = await purges.start(request_for(table, s3.properties, progress_event_seconds=1))
            await status_when(purges, purge_id, lambda status: status.state is PurgeState.SUCCEEDED)
            # Past the progress interval, so only the closing stream keeps the signal from emitting.
            await asyncio.sleep(1.2)
            handle = temporal_client.get_workflow_handle(purge_id)
            await handle.signal(CHUNK_PROGRESS_SIGNAL, ChunkProgress(chunk_index=0, counts=FileCounts()))
            await purges.wait(purge_id)

    events = _in_order(received.events())
    assert events[-1].kind is EventKind.COMPLETED


def _event_worker(stack: EmbeddedStack, name: str, url: str, **overrides: str) -> ServiceProcess:
    worker = stack.worker_process(
        name,
        ICEPURGE_EVENT_SINKS='["log", "webhook"]',
        ICEPURGE_WEBHOOK_URL=url,
        ICEPURGE_WEBHOOK_SECRET=WEBHOOK_SECRET,
        ICEPURGE_CHUNK_TARGET_FILES="40",
        **overrides,
    )
    worker.start()
    return worker


async def test_a_killed_worker_loses_no_event_and_redelivers_under_the_same_id(
    catalog: SqlCatalog, temporal_client: Client, s3: S3Store, stack: EmbeddedStack
) -> None:
    table = many_files_table(catalog, ("events",), "killed", manifests=8, files=20)
    queue = "icepurge-events-kill"
    purges = PurgeClient(temporal_client, queue)
    with webhook_receiver() as (url, received), s3_proxy(stack.ports.s3) as (port, faults):
        faults.delete_delay = 0.3
        request = request_for(
            table,
            through_proxy(s3.properties, port),
            progress_event_seconds=1,
            chunk_window=1,
            express_lane=False,
        )
        worker = _event_worker(stack, "events-worker-0", url, ICEPURGE_TASK_QUEUE=queue)
        try:
            purge_id = await purges.start(request)
            for generation, point in enumerate((3, 8), start=1):
                await asyncio.wait_for(faults.deletes_reached(point), timeout=120)
                worker.kill()
                worker = _event_worker(stack, f"events-worker-{generation}", url, ICEPURGE_TASK_QUEUE=queue)
            report = await asyncio.wait_for(purges.wait(purge_id), timeout=300)
        finally:
            worker.stop()

    assert report.status.state is PurgeState.SUCCEEDED
    events = _in_order(received.events())
    assert report.status.counts.of(Category.DATA_FILES).deleted == 8 * 20
    _assert_full_sequence(events, report)
    assert all(received.signatures_valid)
    logged = [
        PurgeEvent.model_validate(line)
        for log in sorted((stack.state_dir / "logs").glob("events-worker-*.log"))
        for line in json_lines(log.read_text())
        if line.get("purge_id") == purge_id
    ]
    assert {event.event_id for event in logged} == {event.event_id for event in events}
    secret = s3.properties["s3.secret-access-key"]
    for log in (stack.state_dir / "logs").glob("events-worker-*.log"):
        assert secret not in log.read_text()
        assert WEBHOOK_SECRET not in log.read_text()


async def test_a_failing_webhook_neither_fails_nor_stalls_the_purge_and_metrics_move(
    catalog: SqlCatalog, temporal_client: Client, s3: S3Store, stack: EmbeddedStack
) -> None:
    table = many_files_table(catalog, ("events",), "dead_receiver", manifests=6, files=20)
    queue = "icepurge-events-failing"
    metrics_port = free_ports(1)[0]
    purges = PurgeClient(temporal_client, queue)
    attempts, timeout = 3, 2.0
    with webhook_receiver(fail_with=500) as (url, received):
        worker = _event_worker(
            stack,
            "events-worker-failing",
            url,
            ICEPURGE_TASK_QUEUE=queue,
            ICEPURGE_WEBHOOK_MAX_ATTEMPTS=str(attempts),
            ICEPURGE_WEBHOOK_TIMEOUT_SECONDS=str(timeout),
            ICEPURGE_METRICS_ADDRESS=f"127.0.0.1:{metrics_port}",
        )
        try:
            worker.wait_for_port(metrics_port)
            before = await scrape(metrics_port)
            purge_id = await purges.start(request_for(table, s3.properties, progress_event_seconds=1))
            report = await asyncio.wait_for(purges.wait(purge_id), timeout=240)
            # The SDK counts a workflow completed once the server has accepted its completion,
            # which the client waiting on the result may hear first.
            after = await eventually(
                partial(scrape, metrics_port),
                lambda samples: metric_sum(samples, "temporal_workflow_completed") >= 1,
                seconds=15,
            )
        finally:
            worker.stop()

    assert report.status.state is PurgeState.SUCCEEDED
    assert s3.list(table.location()) == set()
    assert report.status.events_undelivered >= 2, "started and completed, at least, went nowhere"
    # The receiver never stalls the purge: the final event finds the sink cooling down, so the
    # run closes within one event's retry budget of its last delete step (the one step of a small
    # purge by snapshot).
    history = await temporal_client.get_workflow_handle(purge_id).fetch_history()
    finalize = next(
        event.event_id
        for event in history.events
        if event.activity_task_scheduled_event_attributes.activity_type.name
        in (FINALIZE_ACTIVITY, PLAN_AND_FINISH_ACTIVITY)
    )
    finalized = next(
        event.event_time.ToDatetime()
        for event in history.events
        if event.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED
        and event.activity_task_completed_event_attributes.scheduled_event_id == finalize
    )
    closed = history.events[-1].event_time.ToDatetime()
    budget = attempts * (timeout + 4.0)
    assert (closed - finalized) < timedelta(seconds=budget + 5)
    # The cool-down (30 s) keeps a dead receiver from being asked again for every event.
    assert received.attempts <= attempts * 2

    files = 6 * 20
    deleted = 'category="data_files"', 'outcome="deleted"'
    assert metric_sum(before, "icepurge_files", *deleted) == 0
    assert metric_sum(after, "icepurge_files", *deleted) == files
    assert metric_sum(after, "icepurge_files", 'category="manifests"', 'outcome="deleted"') == 6
    assert (
        metric_sum(after, "icepurge_deleted_bytes", 'category="data_files"')
        == report.status.counts.of(Category.DATA_FILES).bytes_deleted
    )
    assert metric_sum(after, "icepurge_delete_request_latency_count") > metric_sum(
        before, "icepurge_delete_request_latency_count"
    )
    assert metric_sum(after, "icepurge_chunk_duration_count") >= report.status.chunks_total
    assert json.dumps(after).find(s3.properties["s3.secret-access-key"]) < 0
