"""The chaos tier: several purges at once through a fault proxy (503 SlowDown, resets before and
after the request reaches the store) while workers are SIGKILLed at random moments — and, in
the full run, the Temporal server restarts once — then every promise is checked against sets
computed independently from the metadata: no owned file left, nothing else touched, delete
order kept, counts exact, every purge closed within its bound.

`make test` runs a short variant; `make chaos` the full one (ICEPURGE_CHAOS_KILLS=50,
ICEPURGE_CHAOS_RESTART_SERVER=1, ICEPURGE_CHAOS_SCALE=3), printing its summary.
"""

from __future__ import annotations

import asyncio
import os
import random
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import NamedTuple, TypeVar

import pytest
from pyiceberg.catalog.sql import SqlCatalog
from pyiceberg.table import Table
from temporalio.api.enums.v1 import PendingActivityState, PendingWorkflowTaskState
from temporalio.client import Client
from temporalio.service import RPCError

from icepurge.api.clients.errors import PurgeServiceUnavailableError
from icepurge.api.clients.temporal_client import PurgeClient
from icepurge.api.clients.temporal_namespace_client import namespace_request
from icepurge.contract.namespace_status import NamespacePurgeStatus
from icepurge.contract.states import PurgeState
from icepurge.contract.status import PurgeStatus
from icepurge.devstack.process import ServiceProcess
from icepurge.devstack.rewrite_heavy_table import RewriteShape, rewrite_heavy_table
from icepurge.devstack.s3_proxy import RandomFaults, s3_proxy, through_proxy
from icepurge.devstack.stack import EmbeddedStack
from icepurge.devstack.synthetic_table import TableShape, synthetic_table
from tests.batch_records import batch_records
from tests.conftest import LAKE_CATALOG
from tests.expected import content_listings, drop_table_data_set, history_set, manifest_contents
from tests.purge_helpers import assert_counts_add_up, request_for
from tests.store import S3Store, key_of
from tests.tables import rich_table, simple_table

KILLS = int(os.environ.get("ICEPURGE_CHAOS_KILLS", "4"))
RESTART_SERVER = os.environ.get("ICEPURGE_CHAOS_RESTART_SERVER", "0") == "1"
SCALE = int(os.environ.get("ICEPURGE_CHAOS_SCALE", "1"))
SEED = int(os.environ.get("ICEPURGE_CHAOS_SEED", "20261122"))
# Seconds added to each bulk delete and each read: the full run stretches the purges over all
# its kills.
DELETE_DELAY = float(os.environ.get("ICEPURGE_CHAOS_DELETE_DELAY", "0.05"))
READ_DELAY = float(os.environ.get("ICEPURGE_CHAOS_READ_DELAY", "0"))
# How long a purge may take from its start to its close, kills and faults included.
BOUND_SECONDS = 240 * SCALE
QUEUE = "icepurge-chaos"
WORKERS = 2
pytestmark = [pytest.mark.chaos, pytest.mark.timeout(BOUND_SECONDS + 600)]
WORKER_ENV = {
    "ICEPURGE_TASK_QUEUE": QUEUE,
    "ICEPURGE_CHUNK_TARGET_FILES": "20",
    "ICEPURGE_DELETE_BATCH_FILES": "10",
    # Namespace purges read their table lists across pages of a few names while workers die.
    "ICEPURGE_TABLE_LIST_PAGE_ENTRIES": "5",
    "ICEPURGE_SHUTDOWN_GRACE_SECONDS": "2",
    # Chaos tables plan in well under a second: without this their chunks would never delete
    # while planning runs, and kills would never land in that overlap.
    "ICEPURGE_OVERLAP_MIN_SECONDS": "0",
}
PLANTED = "data/never-referenced-chaos.parquet"
# 60 appends: 60 manifest lists, 60 older metadata files and 60 manifests for planning to read,
# each answer held this long: a few seconds of planning, more than a worker lives here.
SLOW_PLAN = TableShape(manifests=60, files_per_manifest=5 * SCALE, snapshots=60)
SLOW_PLAN_READ = 0.2
HOLD_NAMESPACE = "chaos_held"
# Namespace purges of this many small tables each run beside the cases: one a workflow per table
# (express lane, by name), one in batches of small tables.
SMALL_TABLES = 12 * SCALE


class SmallNamespace(NamedTuple):
    batch_tables: int
    # Set: a tree of ranges of this many tables, two at once in a window of 32.
    range_tables: int | None = None

    @property
    def window(self) -> int:
        return 32 if self.range_tables else 4

    @property
    def mode(self) -> str:
        mode = f"in batches of {self.batch_tables}" if self.batch_tables else "a workflow per table"
        return mode + (f", in ranges of {self.range_tables}" if self.range_tables else "")


SMALL_NAMESPACES = {
    ("chaos_many",): SmallNamespace(0),
    ("chaos_batched",): SmallNamespace(4),
    ("chaos_tree",): SmallNamespace(4, range_tables=SMALL_TABLES // 4),
}


@dataclass
class Case:
    name: str
    table: Table
    before: set[str]
    expected_after: set[str]
    owned: set[str]
    manifests: dict[str, set[str]]
    kept: dict[str, bytes] = field(default_factory=dict)
    distinct_content: int | None = None
    purge_id: str = ""
    # Purged by name from the lake catalog (load, plan, drop, wait, delete), not from a snapshot.
    by_name: dict[str, int | str] | None = None
    # A purge by snapshot's own options.
    options: dict[str, bool] = field(default_factory=dict)


def _case(s3: S3Store, name: str, table: Table, gc_enabled: bool = True) -> Case:
    s3.put(f"{table.location()}/{PLANTED}")
    io, location = table.io, table.metadata_location
    owned = drop_table_data_set(io, location) | history_set(io, location)
    content = {path for path, _ in content_listings(io, location)}
    if not gc_enabled:
        owned -= content
    before = s3.list(table.location())
    return Case(
        name=name,
        table=table,
        before=before,
        expected_after=before - owned,
        owned=owned,
        manifests=manifest_contents(io, location) if gc_enabled else {},
        distinct_content=len(content),
    )


def _cases(catalog: SqlCatalog, lake: SqlCatalog, s3: S3Store) -> list[Case]:
    namespace = ("chaos",)
    shape = RewriteShape(
        partitions=10 * SCALE, appends=8, row_deletes=4, partition_deletes=1, overwrites=2, expired=3
    )
    shared = simple_table(catalog, namespace, "shared", appends=3)
    neighbour = simple_table(catalog, namespace, "shared_neighbour", appends=3)
    wide = synthetic_table(
        catalog, ("chaos", "wide"), TableShape(manifests=120 * SCALE, files_per_manifest=2, snapshots=4)
    )
    cases = [
        _case(s3, "rewrite-heavy", rewrite_heavy_table(catalog, namespace, "rewrites", shape)),
        _case(s3, "busy with history", rich_table(catalog, namespace, "busy")),
        _case(
            s3,
            "gc.enabled=false",
            simple_table(catalog, namespace, "nogc", appends=4, properties={"gc.enabled": "false"}),
            gc_enabled=False,
        ),
        _case(s3, "shares a prefix with a kept neighbour", shared),
        _case(s3, "continues as new", wide),
        _case(s3, "by name", rich_table(lake, namespace, "by_name")),
        _case(s3, "by name, soft delete", simple_table(lake, namespace, "soft", appends=4)),
        _case(s3, "by name, express lane", simple_table(lake, namespace, "express", appends=3)),
        _case(s3, "by name, step by step", rich_table(lake, namespace, "stepwise")),
        _case(s3, "by name, held", simple_table(lake, namespace, "held", appends=3)),
        _case(s3, "by name, held, soft delete", rich_table(lake, namespace, "held_soft")),
        # Its metadata's reads held (SLOW_PLAN_READ): planning outlasts the gap between kills.
        _case(s3, "plans through the kills", synthetic_table(catalog, ("chaos", "slow_plan"), SLOW_PLAN)),
    ]
    cases[3].kept = {path: s3.read(path) for path in s3.list(neighbour.location())}
    # Its few entries would take the one step: step by step, it crosses runs.
    cases[4].options = {"express_lane": False}
    cases[5].by_name = {}
    cases[6].by_name = {"purge_after_seconds": 3}
    cases[7].by_name = {}
    cases[8].by_name = {"express_lane": False}
    cases[9].by_name = {"hold_namespace": HOLD_NAMESPACE}
    cases[10].by_name = {"hold_namespace": HOLD_NAMESPACE, "purge_after_seconds": 3}
    return cases


async def _start(purges: PurgeClient, case: Case, properties: dict[str, str]) -> str:
    if case.by_name is None:
        return await purges.start(request_for(case.table, properties, chunk_window=2, **case.options))
    *namespace, name = case.table.name()
    request = {
        "catalog": LAKE_CATALOG,
        "namespace": namespace,
        "table": name,
        "requested_by": "chaos",
        # The caller's FileIO properties win over the catalog's: the deletes go through the proxy.
        "file_io_properties": properties,
        "options": {"chunk_window": 2, **case.by_name},
    }
    return await purges.start(request)


def _worker(stack: EmbeddedStack, generation: int) -> ServiceProcess:
    worker = stack.worker_process(f"chaos-worker-{generation}", **WORKER_ENV)
    worker.start()
    return worker


async def _kill_loop(stack: EmbeddedStack, workers: list[ServiceProcess], draw: random.Random) -> list[float]:
    """SIGKILLs a random worker every 0.5-4 s and starts a new one in its place; restarts the
    Temporal server once halfway when asked. Returns when each kill happened."""
    generation = len(workers)
    kill_times = []
    for kill in range(1, KILLS + 1):
        await asyncio.sleep(draw.uniform(0.5, 4.0))
        victim = draw.randrange(len(workers))
        workers[victim].kill()
        kill_times.append(time.time())
        workers[victim] = _worker(stack, generation)
        generation += 1
        if RESTART_SERVER and kill == KILLS // 2:
            await asyncio.to_thread(stack.restart_temporal)
    return kill_times


Closing = TypeVar("Closing", PurgeStatus, NamespacePurgeStatus)


async def _closed(
    status_of: Callable[[], Awaitable[Closing]], client: Client, purge_id: str, deadline: float
) -> Closing:
    """Waits for the purge to close; tolerates the server being briefly away after its restart.
    One that doesn't close is shown as it last stood: where it is and what it waits for."""
    status: Closing | None = None
    while time.monotonic() < deadline:
        try:
            status = await status_of()
        except (PurgeServiceUnavailableError, RPCError):
            # A restarting server answers nothing for a moment.
            await asyncio.sleep(1)
            continue
        if status.finished_at is not None:
            return status
        await asyncio.sleep(1)
    last = status.model_dump_json(exclude_defaults=True) if status is not None else "no status"
    raise AssertionError(
        f"purge {purge_id} did not close within {BOUND_SECONDS} s; it stood at {last}; "
        f"the server had pending {await _pending(client, purge_id)}"
    )


async def _pending(client: Client, purge_id: str) -> str:
    """The purge's pending activities and workflow task, as the server describes them."""
    raw = (await client.get_workflow_handle(purge_id).describe()).raw_description
    activities = [
        f"{pending.activity_type.name} ({PendingActivityState.Name(pending.state)},"
        f" attempt {pending.attempt}, last heartbeat {pending.last_heartbeat_time.ToJsonString()},"
        f" last failure {pending.last_failure.message[:300]!r})"
        for pending in raw.pending_activities
    ]
    task = raw.pending_workflow_task
    task_state = PendingWorkflowTaskState.Name(task.state)
    return f"activities {activities or 'none'}, workflow task attempt {task.attempt} ({task_state})"


async def _final_status(purges: PurgeClient, client: Client, purge_id: str, deadline: float) -> PurgeStatus:
    return await _closed(lambda: purges.status(purge_id), client, purge_id, deadline)


def _span(status: PurgeStatus) -> tuple[float, float]:
    """When the purge started and closed (epoch seconds)."""
    assert status.finished_at is not None and status.started_at is not None
    return status.started_at.timestamp(), status.finished_at.timestamp()


def _check_dropped_once(stack: EmbeddedStack, lake: SqlCatalog, case: Case, status: PurgeStatus) -> list[str]:
    problems = []
    if lake.table_exists(case.table.name()):
        problems.append(f"{case.name}: still in the catalog")
    if status.dropped_at is None:
        problems.append(f"{case.name}: no drop recorded")
    held = case.by_name is not None and "hold_namespace" in case.by_name
    if held != (status.held_as is not None):
        problems.append(f"{case.name}: held as {status.held_as!r}")
    if status.held_as is not None and lake.table_exists(tuple(status.held_as.split("."))):
        problems.append(f"{case.name}: still held in the catalog as {status.held_as}")
    dropped = status.held_as or ".".join(case.table.name())
    logs = "".join(path.read_text() for path in (stack.state_dir / "logs").glob("chaos-worker-*.log"))
    drops = logs.count(f"dropped the catalog entry of {LAKE_CATALOG}.{dropped} ")
    # A kill between the drop and its log line leaves none; a second drop would log twice.
    if drops > 1:
        problems.append(f"{case.name}: the catalog entry was dropped {drops} times")
    return problems


def _check_order(case: Case, first_delete: dict[str, int]) -> list[str]:
    """A manifest after every file it lists; the current metadata file after everything else."""
    problems = []
    for manifest, contents in case.manifests.items():
        at = first_delete.get(key_of(manifest))
        if at is None or manifest not in case.owned:
            continue
        early = [path for path in contents if first_delete.get(key_of(path), -1) > at]
        if early:
            problems.append(f"{case.name}: {manifest} deleted before {len(early)} of its files")
    current = first_delete.get(key_of(case.table.metadata_location))
    others = [first_delete[key] for key in map(key_of, case.owned & case.before) if key in first_delete]
    if current is None or current < max(others):
        problems.append(f"{case.name}: the current metadata file was not deleted last")
    return problems


def _small_cases(lake: SqlCatalog, s3: S3Store, namespace: tuple[str, ...]) -> list[Case]:
    """A namespace purge's tables: each checked as a case purged by name."""
    cases = [
        _case(s3, f"{namespace[-1]} {index}", simple_table(lake, namespace, f"t{index:03d}", appends=3))
        for index in range(SMALL_TABLES)
    ]
    for case in cases:
        case.by_name = {}
    return cases


async def _final_namespace_status(
    purges: PurgeClient, client: Client, purge_id: str, deadline: float
) -> NamespacePurgeStatus:
    return await _closed(lambda: purges.namespaces.status(purge_id), client, purge_id, deadline)


async def _table_statuses(
    purges: PurgeClient, s3: S3Store, stack: EmbeddedStack, purge_id: str, batched: bool
) -> dict[str, PurgeStatus]:
    """Each table's purge by table name: its workflow's status, or its batch's record."""
    if batched:
        records = batch_records(s3, stack.worker_env()["ICEPURGE_STATE_LOCATION"], purge_id)
        return {name: record.status for name, record in records.items()}
    listed = (await purges.namespace_tables(purge_id, 1000)).items
    return {item.table: await purges.status(item.purge_id) for item in listed if item.table}


def _check_small_tables(
    stack: EmbeddedStack, lake: SqlCatalog, s3: S3Store, cases: list[Case], statuses: dict[str, PurgeStatus]
) -> list[str]:
    """Every table of a namespace purge: its files gone but the planted one, dropped once, its
    own purge SUCCEEDED with counts that add up."""
    problems: list[str] = []
    for case in cases:
        *_, name = case.table.name()
        after = s3.list(case.table.location())
        if after != case.expected_after:
            problems.append(f"{case.name}: left {sorted(after - case.expected_after)[:3]}")
        status = statuses.get(name)
        if status is None:
            problems.append(f"{case.name}: no table purge found")
            continue
        if status.state is not PurgeState.SUCCEEDED:
            problems.append(f"{case.name}: ended {status.state.value}: {status.last_error}")
        try:
            assert_counts_add_up(status)
        except AssertionError as error:
            problems.append(f"{case.name}: counts don't add up: {error}")
        problems.extend(_check_dropped_once(stack, lake, case, status))
    return problems


async def test_every_promise_holds_under_kills_faults_and_a_server_restart(
    catalog: SqlCatalog, lake: SqlCatalog, temporal_client: Client, s3: S3Store, stack: EmbeddedStack
) -> None:
    cases = _cases(catalog, lake, s3)
    small = {namespace: _small_cases(lake, s3, namespace) for namespace in SMALL_NAMESPACES}
    twin = rich_table(catalog, ("chaos",), "busy_twin")
    draw = random.Random(SEED)
    purges = PurgeClient(temporal_client, QUEUE)
    workers = [_worker(stack, generation) for generation in range(WORKERS)]
    faults_summary: Counter[str] = Counter()
    try:
        with s3_proxy(stack.ports.s3) as (port, faults):
            random_faults = RandomFaults(slow_down=0.04, reset_before=0.02, reset_after=0.02, seed=SEED)
            faults.delete_delay = DELETE_DELAY
            faults.read_delay = READ_DELAY
            faults.hold_answers("GET", "/chaos/slow_plan/metadata/", SLOW_PLAN_READ)
            properties = through_proxy(s3.properties, port)
            # The busy table's twin, purged with the same delays but no faults and no kills.
            undisturbed = await purges.wait(await purges.start(request_for(twin, properties, chunk_window=2)))
            faults.random_faults = random_faults
            started = time.monotonic()
            for case in cases:
                case.purge_id = await _start(purges, case, properties)
            # Its tables' deletes go to the store directly (the catalog's FileIO): kills and the
            # server restart reach it, the proxy's faults don't.
            many = {
                namespace: await purges.namespaces.start(
                    namespace_request(
                        LAKE_CATALOG,
                        list(namespace),
                        requested_by="chaos",
                        max_concurrent_tables=shape.window,
                        batch_tables=shape.batch_tables,
                        range_tables=shape.range_tables,
                    )
                )
                for namespace, shape in SMALL_NAMESPACES.items()
            }
            kill_times = await _kill_loop(stack, workers, draw)
            finals = [
                await _final_status(purges, temporal_client, case.purge_id, started + BOUND_SECONDS)
                for case in cases
            ]
            many_finals = {
                namespace: await _final_namespace_status(
                    purges, temporal_client, purge_id, started + BOUND_SECONDS
                )
                for namespace, purge_id in many.items()
            }
            faults_summary = faults.random_faults.injected.copy()
            deleted_keys = list(faults.deleted_keys)
    finally:
        for worker in workers:
            worker.kill()

    first_delete: dict[str, int] = {}
    for index, key in enumerate(deleted_keys):
        first_delete.setdefault(key, index)
    sent = Counter(deleted_keys)
    problems: list[str] = []
    last_close = max(status.finished_at.timestamp() for status in finals if status.finished_at)
    during = sum(moment < last_close for moment in kill_times)
    print(
        f"\nchaos: {len(kill_times)} worker kills ({during} while purges ran),"
        f" server restarted: {RESTART_SERVER}, faults injected: {dict(faults_summary)},"
        f" {len(deleted_keys):,} keys sent in bulk deletes"
    )
    for case, status in zip(cases, finals, strict=True):
        after = s3.list(case.table.location())
        keys = {key_of(path) for path in case.owned}
        resent = sum(sent[key] - 1 for key in keys if sent[key] > 1)
        opened, closed = _span(status)
        seconds = closed - opened
        kills = sum(opened <= moment <= closed for moment in kill_times)
        print(
            f"  {case.name}: {status.state.value} in {seconds:.0f} s through {kills} kills,"
            f" {status.run_count} runs,"
            f" {status.files_done:,}/{status.files_total:,} files, {len(case.owned & after)} owned left,"
            f" {len(case.before - case.owned - after)} others touched, {resent} keys resent"
        )
        if status.state is not PurgeState.SUCCEEDED:
            problems.append(f"{case.name}: ended {status.state.value}: {status.last_error}")
        if after != case.expected_after:
            left, lost = after - case.expected_after, case.expected_after - after
            problems.append(f"{case.name}: left {sorted(left)[:3]}, lost {sorted(lost)[:3]}")
        problems.extend(_check_order(case, first_delete))
        try:
            assert_counts_add_up(status)
        except AssertionError as error:
            problems.append(f"{case.name}: counts don't add up: {error}")
        if case.distinct_content is not None and status.planned.content_files != case.distinct_content:
            planned = status.planned.content_files
            problems.append(f"{case.name}: planned {planned} content files, {case.distinct_content} distinct")
        for path, body in case.kept.items():
            if not s3.exists(path) or s3.read(path) != body:
                problems.append(f"{case.name}: neighbour file {path} changed")
        if case.by_name is not None:
            problems.extend(_check_dropped_once(stack, lake, case, status))
    for namespace, shape in SMALL_NAMESPACES.items():
        problems.extend(
            await _check_namespace_purge(
                purges, stack, lake, s3, small[namespace], many_finals[namespace], kill_times, shape
            )
        )
    opened, closed = _span(undisturbed.status)
    alone = closed - opened
    busy_opened, busy_closed = _span(finals[1])
    print(
        f"  busy with history, its twin undisturbed (same delays): {alone:.0f} s; under chaos:"
        f" {(busy_closed - busy_opened) / alone:.1f}x"
    )
    assert finals[4].run_count >= 2, "the wide table should have continued as new"
    assert not problems, "\n".join(problems)


async def _check_namespace_purge(
    purges: PurgeClient,
    stack: EmbeddedStack,
    lake: SqlCatalog,
    s3: S3Store,
    cases: list[Case],
    final: NamespacePurgeStatus,
    kill_times: list[float],
    shape: SmallNamespace,
) -> list[str]:
    opened, closed = final.started_at, final.finished_at
    seconds = (closed - opened).total_seconds() if closed and opened else 0.0
    kills = sum(
        opened is not None and closed is not None and opened.timestamp() <= moment <= closed.timestamp()
        for moment in kill_times
    )
    left = sum(len(case.owned & s3.list(case.table.location())) for case in cases)
    mode = shape.mode
    print(
        f"  namespace purge of {SMALL_TABLES} small tables, {mode}: {final.state.value} in {seconds:.0f} s"
        f" through {kills} kills, {final.run_count} runs, {final.tables_done}/{final.tables_total} tables,"
        f" {left} owned left"
    )
    problems = []
    if final.state.value != "SUCCEEDED" or final.tables_done != SMALL_TABLES:
        problems.append(f"namespace purge ({mode}): ended {final.state.value}: {final.last_error}")
    if shape.range_tables and (final.ranges_total, final.ranges_done) != (4, 4):
        problems.append(
            f"namespace purge ({mode}): {final.ranges_done} of {final.ranges_total} ranges, not 4"
        )
    statuses = await _table_statuses(purges, s3, stack, final.purge_id, batched=bool(shape.batch_tables))
    return problems + _check_small_tables(stack, lake, s3, cases, statuses)
