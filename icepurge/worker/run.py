"""Runs a worker until asked to stop (SIGINT/SIGTERM), finishing or handing back what it holds."""

from __future__ import annotations

import asyncio
import logging
import signal
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta

from temporalio.client import Client
from temporalio.worker import Interceptor, Worker

from icepurge.activities.catalog.catalog_activities import CatalogActivities
from icepurge.activities.catalog.planned_drop import PlannedDrops
from icepurge.activities.catalog.table_catalog import TableCatalog
from icepurge.activities.catalog.table_holds import TableHolds
from icepurge.activities.delete.spark_engine import SparkEngine
from icepurge.activities.namespace.namespace_activities import NamespaceActivities
from icepurge.activities.namespace.table_lists import TableLists
from icepurge.activities.purge.batch_activities import BatchActivities
from icepurge.activities.purge.batch_table import BatchTablePurge
from icepurge.activities.purge.express_activities import ExpressActivities
from icepurge.activities.purge.express_finish import ExpressFinish
from icepurge.activities.purge.purge_activities import PurgeActivities
from icepurge.activities.purge.purge_services import PurgeServices
from icepurge.activities.signals.event_delivery import EventDelivery
from icepurge.activities.signals.progress_signals import ProgressSignals
from icepurge.activities.step_definition import activities_of
from icepurge.activities.sweep.sweep_activities import SweepActivities
from icepurge.catalogs.admission import CatalogAdmission
from icepurge.catalogs.configured import CatalogRegistry
from icepurge.catalogs.live_tables import FootprintCache, LiveTableScanner
from icepurge.connection.connect import connect
from icepurge.connection.tracing import start_tracing
from icepurge.contract.schemes import StoreKind, store_kind
from icepurge.state.state_store import StateStore
from icepurge.stores import s3_obstore
from icepurge.stores.s3_client import load_s3_model
from icepurge.worker.expected_failures import ExpectedFailures
from icepurge.worker.malloc_arenas import limit_malloc_arenas
from icepurge.worker.purge_workers import PurgeWorkers
from icepurge.worker.sandbox_runner import sandboxed_runner
from icepurge.worker.settings import WorkerSettings
from icepurge.worker.sinks import build_sinks
from icepurge.worker.spark_session import build_spark_session, warm_up
from icepurge.workflows.namespace.purge_namespace import PurgeNamespaceWorkflow
from icepurge.workflows.namespace.purge_table_range import PurgeTableRangeWorkflow
from icepurge.workflows.shared.echo import EchoWorkflow
from icepurge.workflows.table.purge_table import PurgeTableWorkflow

log = logging.getLogger(__name__)
# What the CLI names when a worker can't start on the S3 client asked for.
S3ClientChoiceError = s3_obstore.S3ClientChoiceError
HEARTBEAT_THROTTLE = timedelta(seconds=2)
# A workflow task goes first to the queue of the worker that ran the workflow last (the SDK's
# default waits 10 s for it there). A worker that died leaves the next task of each of its
# purges waiting that long, a purge that dropped a table among them, while its caller is told
# "retry"; a live worker takes its sticky tasks within milliseconds.
STICKY_QUEUE_TIMEOUT = timedelta(seconds=3)
# Local activities (a hold's first attempt) at once per worker; each has a thread of its own.
LOCAL_ACTIVITY_SLOTS = 4


def build_batches(
    settings: WorkerSettings, admission: CatalogAdmission, scanner: LiveTableScanner, lists: TableLists
) -> BatchActivities:
    """A batch's steps of their own, signalling no workflow (a batch's tables have none), on the
    worker's live-table index; its plans never go to Spark (a batch takes small plans only)."""
    services = PurgeServices.build(settings.activity_settings(), admission=admission)
    catalogs = TableCatalog(admission, scanner)
    state = StateStore(settings.state_location, settings.state_io_properties)
    drops = PlannedDrops(catalogs, state)
    return BatchActivities(BatchTablePurge(services, ExpressFinish(services, catalogs), drops, state), lists)


def activity_pool(settings: WorkerSettings) -> ThreadPoolExecutor:
    """A thread for each activity slot of both queues, and for each local one: a hold in a
    workflow task never waits behind running chunks for a thread."""
    slots = settings.max_concurrent_activities + settings.bulk_slots
    return ThreadPoolExecutor(max_workers=slots + 2 * LOCAL_ACTIVITY_SLOTS)


def build_worker(
    client: Client,
    settings: WorkerSettings,
    pool: ThreadPoolExecutor,
    interceptors: Sequence[Interceptor] = (),
) -> PurgeWorkers:
    """Call from the event loop the worker will run on: activities signal through it."""
    spark = None
    if settings.spark_master:
        # Started with the worker, so the first big purge finds it warm.
        session = build_spark_session(settings.spark_master, settings.spark_conf)
        warm_up(session)
        spark = SparkEngine(
            session,
            settings.state_location,
            settings.state_io_properties,
            settings.delete_tuning(),
        )
    signals = ProgressSignals(client, asyncio.get_running_loop(), settings.progress_signal_seconds)
    admission = CatalogAdmission(CatalogRegistry.from_pyiceberg_config(), settings.snapshot_only_catalogs)
    services = PurgeServices.build(settings.activity_settings(), spark, signals, admission)
    activities = PurgeActivities(services, signals)
    scanner = LiveTableScanner(FootprintCache(settings.guard_cache_seconds), settings.guard_concurrency)
    catalogs = TableCatalog(admission, scanner, signals)
    catalog_steps = CatalogActivities(catalogs)
    state = StateStore(settings.state_location, settings.state_io_properties)
    express = ExpressActivities(services, catalogs, PlannedDrops(catalogs, state))
    holds = TableHolds(catalogs, signals)
    lists = TableLists(state)
    batches = build_batches(settings, admission, scanner, lists)
    namespaces = NamespaceActivities(
        catalogs.registry, state, lists, signals, settings.table_list_page_entries
    )
    sweeps = SweepActivities(settings.activity_settings(), spark, signals)
    delivery = EventDelivery(build_sinks(settings))

    def build(task_queue: str, slots: int) -> Worker:
        return Worker(
            client,
            task_queue=task_queue,
            workflows=[PurgeTableWorkflow, PurgeNamespaceWorkflow, PurgeTableRangeWorkflow, EchoWorkflow],
            activities=activities_of(
                activities, catalog_steps, holds, express, batches, namespaces, sweeps, delivery
            ),
            activity_executor=pool,
            max_concurrent_activities=slots,
            max_concurrent_local_activities=LOCAL_ACTIVITY_SLOTS,
            sticky_queue_schedule_to_start_timeout=STICKY_QUEUE_TIMEOUT,
            # A running chunk learns it was cancelled from a heartbeat's answer; by default the SDK
            # sends them only every 0.8 x the heartbeat timeout (12 s), too late to stop a Spark job
            # "within seconds".
            max_heartbeat_throttle_interval=HEARTBEAT_THROTTLE,
            default_heartbeat_throttle_interval=HEARTBEAT_THROTTLE,
            workflow_runner=sandboxed_runner(),
            interceptors=[ExpectedFailures(), *interceptors],
            # A rolling deploy's SIGTERM: stop polling, let running steps finish within the grace
            # period, then cancel them at their checkpoints so another worker retries them at once
            # instead of waiting for a heartbeat timeout.
            graceful_shutdown_timeout=timedelta(seconds=settings.shutdown_grace_seconds),
            deployment_config=settings.deployment_config(),
        )

    return PurgeWorkers(build, settings.task_queue, settings.max_concurrent_activities, settings.bulk_slots)


async def serve(settings: WorkerSettings) -> None:
    """Raises S3ClientChoiceError before it connects, for an ICEPURGE_S3_CLIENT it can't honour."""
    s3_obstore.obstore_chosen()
    if settings.malloc_arenas:
        limit_malloc_arenas(settings.malloc_arenas)
    if store_kind(settings.state_location) is StoreKind.S3:
        # Before the first purge, not in it: the express lane keeps a plan in the state location
        # before its drop, and the first client built loads botocore's S3 model (0.2-0.3 s on a
        # front door's first DELETE after a start).
        load_s3_model()
    start_tracing("icepurge-worker")
    client = await connect(settings, metrics_address=settings.metrics_address)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stop.set)
    with activity_pool(settings) as pool:
        workers = build_worker(client, settings, pool)
        async with workers:
            log.info(
                "icepurge worker polling %s and %s on %s",
                workers.main.task_queue,
                workers.bulk.task_queue,
                client.service_client.config.target_host,
            )
            if settings.deployment_name:
                log.info(
                    "as Worker Deployment Version %s.%s (%s)",
                    settings.deployment_name,
                    settings.build_id,
                    settings.versioning_behavior.value,
                )
            await stop.wait()
            log.info("icepurge worker stopping")
