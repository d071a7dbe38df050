"""The workflows' own logic, with every activity replaced by a fake that records its calls: the
order of steps, each chunk run once across continue-as-new, failures, controls that arrive with
the start, soft delete and undrop, a namespace purge's outcome across its table purges. They run
in seconds on a dev server of their own, no store or catalog (the SDK's time-skipping test server
is a download these machines can't make: docs/reference/layout.md)."""

from __future__ import annotations

import asyncio
import json
import uuid
from collections import Counter
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import pytest
from temporalio import activity
from temporalio.api.history.v1 import HistoryEvent
from temporalio.client import Client, WorkflowFailureError, WorkflowHistory, WorkflowQueryFailedError
from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.exceptions import ApplicationError
from temporalio.testing import WorkflowEnvironment
from temporalio.worker import Worker

from icepurge.api.clients.closed_by_server import ERROR_CLOSED_BY_SERVER
from icepurge.api.clients.errors import PurgeFailedError
from icepurge.api.clients.listing import PurgeFilter
from icepurge.api.clients.temporal_client import PurgeClient
from icepurge.api.clients.temporal_namespace_client import namespace_request
from icepurge.contract import activity_steps as steps
from icepurge.contract.batch_steps import RangeBatchInput, RangeBatchResult
from icepurge.contract.catalog_steps import (
    DropInput,
    DropResult,
    GuardInput,
    HeldTable,
    HoldInput,
    LoadedTable,
    RegisterInput,
    RegisterResult,
    TableRef,
)
from icepurge.contract.controls import TableControl
from icepurge.contract.counts import Category, FileCounts, OutcomeCounts
from icepurge.contract.events import DeliveryReport, EventBatch, EventKind, PurgeEvent
from icepurge.contract.express_steps import (
    DroppedPlan,
    FinishInput,
    FinishResult,
    LoadAndPlanInput,
    LoadedPlan,
    PlannedFinish,
)
from icepurge.contract.names import (
    NAMESPACE_CONTROL_SIGNAL,
    SEARCH_ATTRIBUTES,
    STATUS_QUERY,
    TABLE_RANGE_WORKFLOW_TYPE,
    WORKFLOW_TYPE,
)
from icepurge.contract.namespace_status import FileTotals, NamespacePurgeState, NamespacePurgeStatus
from icepurge.contract.namespace_steps import (
    DropNamespacesInput,
    DropNamespacesResult,
    EnumerateInput,
    EnumerationSummary,
    TableName,
    TablePage,
    TablePageInput,
)
from icepurge.contract.range_steps import RANGE_PROGRESS_SECONDS, TableRangeReport
from icepurge.contract.request import PurgeRequest
from icepurge.contract.states import PurgeState
from icepurge.contract.status import GuardName, GuardOutcome, PlannedTotals, PurgeStatus
from icepurge.contract.steps import (
    ChunkInput,
    ChunkResult,
    FinalizeInput,
    FinalizeResult,
    PlanInput,
    PlanSummary,
)
from icepurge.contract.table_outcomes import TableEnd, TableOutcome, TableTallies, outcome_of_error
from icepurge.devstack.binaries import binary
from icepurge.stores.rate_budget import task_share
from icepurge.worker.purge_workers import PurgeWorkers
from icepurge.worker.sandbox_runner import sandboxed_runner
from icepurge.workflows.namespace.purge_namespace import PurgeNamespaceWorkflow
from icepurge.workflows.namespace.purge_table_range import PurgeTableRangeWorkflow
from icepurge.workflows.table.purge_table import PurgeTableWorkflow
from tests.purge_helpers import eventually, local_activity_type
from tests.workflows.replays import replay_failure
from tests.workflows.task_splits import split_after_steps_in_task

QUEUE = "icepurge-workflow-logic"
# The SDK's default activity slots, on each queue.
FAKE_SLOTS = 100
CONTINUE_AS_NEW_EVENTS = 60
FILES_PER_CHUNK = 10
GUARD_PASSED = GuardOutcome(guard=GuardName.LIVE_TABLE, applied=True, passed=True, detail="no live table")


def _deleted(category: Category, files: int) -> FileCounts:
    return FileCounts(by_category={category: OutcomeCounts(deleted=files)})


# The fake catalog's namespace: one table whose plan a test may refuse.
TABLE_NAMES = ["a", "bad", "c"]


def _table_name(index: int) -> str:
    return TABLE_NAMES[index] if index < len(TABLE_NAMES) else f"t{index}"


@dataclass
class FakeSteps:
    """Answers each step as a healthy store and catalog would; `chunks` per plan, `refuse` names
    the steps that fail (non-retryable) and for which tables."""

    chunks: int = 3
    # Tables each namespace enumerates: the first three TABLE_NAMES, then t3, t4, ...
    tables: int = 3
    # Purges by snapshot whose plan_and_finish_small finishes them; the others' plans are too big.
    finishes_at_once: bool = False
    refuse: dict[str, Callable[[str], bool]] = field(default_factory=dict)
    calls: Counter[str] = field(default_factory=Counter)
    # How long each batch takes, and under which namespace purge each batch listed its tables.
    batch_seconds: float = 0.0
    chunk_seconds: float = 0.0
    listed_under: Counter[str | None] = field(default_factory=Counter)
    batched: Counter[int] = field(default_factory=Counter)
    chunk_calls: Counter[tuple[str, int]] = field(default_factory=Counter)
    # Each chunk's share of its purge's budget, as its engine takes it from the chunk's request.
    chunk_shares: dict[tuple[str, int], float | None] = field(default_factory=dict)
    # The task queue each step ran on.
    queues: Counter[tuple[str, str]] = field(default_factory=Counter)
    delivered: list[PurgeEvent] = field(default_factory=list)
    # Steps whose attempts inside a workflow task (local activities) fail, as a catalog or sink
    # that is slow or down for a moment would make them: the activity's attempts succeed.
    fail_in_task: set[str] = field(default_factory=set)
    delivered_in_task: list[PurgeEvent] = field(default_factory=list)

    def _in_task(self, step: str) -> None:
        if activity.info().is_local and step in self.fail_in_task:
            raise ApplicationError(f"{step} failed inside the workflow task", type="Unavailable")

    def _called(self, step: str, table: str) -> None:
        self.calls[step] += 1
        self.queues[(step, activity.info().task_queue)] += 1
        refused = self.refuse.get(step)
        if refused is not None and refused(table):
            raise ApplicationError(f"{step} refused for {table}", type="AccessDenied", non_retryable=True)

    @property
    def activities(self) -> list[Callable[..., Any]]:
        @activity.defn(name=steps.PLAN.name)
        async def plan(step: PlanInput) -> PlanSummary:
            self._called("plan", step.request.table)
            return PlanSummary(
                plan_location=f"memory://{step.purge_id}/plan.json",
                chunk_count=self.chunks,
                planned=PlannedTotals(content_files=self.chunks * FILES_PER_CHUNK, metadata_files=1),
                gc_enabled=True,
                locations=[f"s3://fake/{step.request.table}"],
            )

        @activity.defn(name=steps.CHUNK.name)
        async def chunk(step: ChunkInput) -> ChunkResult:
            self._called("chunk", step.request.table)
            self.chunk_calls[(step.purge_id, step.chunk_index)] += 1
            options = step.request.options
            share = task_share(options.bucket_requests_per_second, options.chunk_window)
            self.chunk_shares[(step.purge_id, step.chunk_index)] = share
            await asyncio.sleep(self.chunk_seconds)
            return ChunkResult(
                chunk_index=step.chunk_index,
                counts=_deleted(Category.DATA_FILES, FILES_PER_CHUNK),
                failures_total=0,
                failure_sample=[],
                delete_requests=1,
            )

        @activity.defn(name=steps.FINALIZE.name)
        async def finalize(step: FinalizeInput) -> FinalizeResult:
            self._called("finalize", step.request.table)
            return FinalizeResult(
                counts=_deleted(Category.METADATA_FILES, 1),
                failures_total=0,
                failure_sample=[],
                report_location=f"memory://{step.purge_id}/report.json",
            )

        @activity.defn(name=steps.DELIVER_EVENTS.name)
        async def deliver(batch: EventBatch) -> DeliveryReport:
            self._in_task(steps.DELIVER_EVENTS.name)
            self.delivered += batch.events
            if activity.info().is_local:
                self.delivered_in_task += batch.events
            return DeliveryReport()

        @activity.defn(name=steps.LOAD_TABLE.name)
        async def load(table: TableRef) -> LoadedTable:
            self._called("load", table.table)
            return LoadedTable(
                metadata_location=f"s3://fake/{table.table}/metadata/v1.metadata.json",
                file_io_properties={},
                protection=GuardOutcome(guard=GuardName.PROTECTION, applied=True, passed=True, detail="none"),
            )

        @activity.defn(name=steps.HOLD_TABLE.name)
        async def hold(step: HoldInput) -> HeldTable:
            self._in_task(steps.HOLD_TABLE.name)
            held = step.table.model_copy(update={"namespace": [step.hold_namespace]})
            return HeldTable(loaded=await load(step.table), held=held)

        @activity.defn(name=steps.DROP_TABLE.name)
        async def drop(step: DropInput) -> DropResult:
            self._called("drop", step.table.table)
            return DropResult(dropped=True)

        @activity.defn(name=steps.LIVE_TABLE_GUARD.name)
        async def guard(step: GuardInput) -> GuardOutcome:
            self._called("guard", step.table.table)
            return GUARD_PASSED

        @activity.defn(name=steps.LOAD_AND_PLAN.name)
        async def load_and_plan(step: LoadAndPlanInput) -> LoadedPlan:
            loaded = await load(TableRef.of(step.purge_id, step.request))
            return LoadedPlan(
                loaded=loaded, plan=await plan(PlanInput(purge_id=step.purge_id, request=step.request))
            )

        @activity.defn(name=steps.LOAD_PLAN_AND_DROP.name)
        async def load_plan_and_drop(step: LoadAndPlanInput) -> DroppedPlan:
            prepared = await load_and_plan(step)
            assert prepared.loaded is not None
            dropped = await drop(
                DropInput(
                    table=TableRef.of(step.purge_id, step.request),
                    metadata_location=prepared.loaded.metadata_location,
                    file_io_properties={},
                )
            )
            return DroppedPlan(loaded=prepared.loaded, plan=prepared.plan, storage_gone=dropped.storage_gone)

        @activity.defn(name=steps.FINISH_SMALL_PURGE.name)
        async def finish(step: FinishInput) -> FinishResult:
            self._called("guard", step.request.table)
            chunks = [
                await chunk(
                    ChunkInput(
                        purge_id=step.purge_id, request=step.request, plan_location="", chunk_index=index
                    )
                )
                for index in range(step.plan.chunk_count)
            ]
            finalized = await finalize(
                FinalizeInput(
                    purge_id=step.purge_id,
                    request=step.request,
                    plan_location=step.plan.plan_location,
                    chunk_count=step.plan.chunk_count,
                    keep_metadata_chain=False,
                    counts_so_far=FileCounts(),
                )
            )
            return FinishResult(guard=GUARD_PASSED, chunks=chunks, finalize=finalized)

        @activity.defn(name=steps.PLAN_AND_FINISH.name)
        async def plan_and_finish(step: PlanInput) -> PlannedFinish:
            planned = await plan(step)
            if not self.finishes_at_once:
                return PlannedFinish(plan=planned)
            finished = await finish(FinishInput(purge_id=step.purge_id, request=step.request, plan=planned))
            return PlannedFinish(plan=planned, finish=finished)

        @activity.defn(name=steps.REGISTER_TABLE.name)
        async def register(step: RegisterInput) -> RegisterResult:
            self._called("register", step.table.table)
            return RegisterResult(registered=True, note="registered again")

        @activity.defn(name=steps.ENUMERATE.name)
        async def enumerate_tree(step: EnumerateInput) -> EnumerationSummary:
            self._in_task(steps.ENUMERATE.name)
            self._called("enumerate", ".".join(step.namespace))
            return EnumerationSummary(
                tree_location=f"memory://{step.purge_id}/tree.json",
                tables_total=self.tables,
                namespaces_total=1,
                entries_skipped=0,
                skipped_sample=[],
            )

        @activity.defn(name=steps.TABLE_PAGE.name)
        async def table_page(step: TablePageInput) -> TablePage:
            names = [
                _table_name(index) for index in range(step.offset, min(step.offset + step.limit, self.tables))
            ]
            return TablePage(tables=[TableName(namespace=["ns"], table=name) for name in names])

        @activity.defn(name=steps.PURGE_RANGE_BATCH.name)
        async def range_batch(step: RangeBatchInput) -> RangeBatchResult:
            """Each table of the batch as its own purge would end: failed where its plan is refused."""
            self.listed_under[step.listed_under] += 1
            await asyncio.sleep(self.batch_seconds)
            tallies = TableTallies()
            for index in range(step.first, step.first + step.count):
                self.batched[index] += 1
                table = _table_name(index)
                try:
                    self._called("plan", table)
                except ApplicationError as refused:
                    tallies.count(outcome_of_error(f"purge-{table}", table, refused.type, refused.message))
                    continue
                files = self.chunks * FILES_PER_CHUNK + 1
                tallies.count(
                    TableOutcome(TableEnd.DONE, files=FileTotals(planned=files, done=files, deleted=files))
                )
            return RangeBatchResult(tallies=tallies)

        @activity.defn(name=steps.DROP_NAMESPACES.name)
        async def drop_namespaces(step: DropNamespacesInput) -> DropNamespacesResult:
            self._called("drop_namespaces", step.catalog)
            return DropNamespacesResult(dropped=0 if step.preview else 1, kept_total=0, kept_sample=[])

        return [
            plan,
            chunk,
            finalize,
            deliver,
            load,
            hold,
            drop,
            guard,
            register,
            load_and_plan,
            load_plan_and_drop,
            finish,
            plan_and_finish,
            enumerate_tree,
            table_page,
            range_batch,
            drop_namespaces,
        ]


@pytest.fixture(scope="module")
async def workflow_env() -> AsyncIterator[WorkflowEnvironment]:
    """A dev server of this module's own (a few seconds to start), with icepurge's search
    attributes and the early continue-as-new suggestion of the test stack."""
    flags = [flag for key, kind in SEARCH_ATTRIBUTES for flag in ("--search-attribute", f"{key}={kind}")]
    flags += ["--dynamic-config-value", f"limit.historyCount.suggestContinueAsNew={CONTINUE_AS_NEW_EVENTS}"]
    async with await WorkflowEnvironment.start_local(
        data_converter=pydantic_data_converter,
        dev_server_existing_path=binary("temporal"),
        dev_server_extra_args=flags,
    ) as env:
        yield env


@pytest.fixture
async def temporal_client(workflow_env: WorkflowEnvironment) -> Client:
    return workflow_env.client


@pytest.fixture
async def fake_worker(temporal_client: Client) -> AsyncIterator[tuple[FakeSteps, PurgeClient]]:
    fake = FakeSteps()

    def build(task_queue: str, slots: int) -> Worker:
        return Worker(
            temporal_client,
            task_queue=task_queue,
            workflows=[PurgeTableWorkflow, PurgeNamespaceWorkflow, PurgeTableRangeWorkflow],
            activities=fake.activities,
            max_concurrent_activities=slots,
            workflow_runner=sandboxed_runner(),
        )

    async with PurgeWorkers(build, QUEUE, FAKE_SLOTS, FAKE_SLOTS):
        yield fake, PurgeClient(temporal_client, QUEUE)


def _snapshot(table: str, **options: Any) -> PurgeRequest:
    return PurgeRequest(
        catalog="tests",
        namespace=["logic"],
        table=f"{table}-{uuid.uuid4().hex[:8]}",
        metadata_location=f"s3://fake/{table}/metadata/v1.metadata.json",
        requested_by="pytest",
        options=options,
    )


async def _until(purges: PurgeClient, purge_id: str, done: Callable[[PurgeStatus], bool]) -> PurgeStatus:
    for _ in range(200):
        status = await purges.status(purge_id)
        if done(status):
            return status
        await asyncio.sleep(0.05)
    raise AssertionError(f"{purge_id} never got there: {status}")


async def test_a_purge_plans_deletes_each_chunk_once_and_finalizes(
    fake_worker: tuple[FakeSteps, PurgeClient],
) -> None:
    fake, purges = fake_worker
    purge_id = await purges.start(_snapshot("plain"))
    status = (await purges.wait(purge_id)).status
    assert status.state is PurgeState.SUCCEEDED
    assert (fake.calls["plan"], fake.calls["chunk"], fake.calls["finalize"]) == (1, 3, 1)
    assert sorted(index for (_, index) in fake.chunk_calls) == [0, 1, 2]
    assert status.files_done == 3 * FILES_PER_CHUNK + 1
    assert (status.chunks_done, status.chunks_total, status.run_count) == (3, 3, 1)
    assert [guard.detail for guard in status.guards] == ["no live table"]


async def test_a_long_purge_continues_as_new_and_runs_every_chunk_exactly_once(
    fake_worker: tuple[FakeSteps, PurgeClient],
) -> None:
    fake, purges = fake_worker
    fake.chunks = 40
    purge_id = await purges.start(_snapshot("long", chunk_window=4))
    status = (await purges.wait(purge_id)).status
    assert status.state is PurgeState.SUCCEEDED
    assert status.run_count > 1, (
        f"the dev server suggests continue-as-new after {CONTINUE_AS_NEW_EVENTS} events"
    )
    assert sorted(index for (_, index) in fake.chunk_calls) == list(range(40))
    assert set(fake.chunk_calls.values()) == {1}
    assert fake.calls["plan"] == 1
    assert status.files_done == 40 * FILES_PER_CHUNK + 1


@pytest.mark.parametrize(("chunks", "window", "share"), [(3, 16, 4.0), (1, 2, 12.0), (3, 2, 6.0)])
async def test_a_purge_of_fewer_chunks_than_its_window_shares_its_budget_among_them(
    fake_worker: tuple[FakeSteps, PurgeClient], chunks: int, window: int, share: float
) -> None:
    fake, purges = fake_worker
    fake.chunks = chunks
    purge_id = await purges.start(_snapshot("shared", chunk_window=window, bucket_requests_per_second=12.0))
    assert (await purges.wait(purge_id)).status.state is PurgeState.SUCCEEDED
    shares = [fake.chunk_shares[(purge_id, index)] for index in range(chunks)]
    first = min(window, chunks)
    assert shares[:first] == [share] * first
    # A chunk started once others finished runs beside fewer: its share is never smaller.
    assert all(later is not None and later >= share for later in shares[first:])


async def test_a_refused_step_fails_the_purge_with_its_reason_and_type(
    fake_worker: tuple[FakeSteps, PurgeClient],
) -> None:
    fake, purges = fake_worker
    fake.refuse["finalize"] = lambda _: True
    purge_id = await purges.start(_snapshot("refused"))
    with pytest.raises(PurgeFailedError):
        await purges.wait(purge_id)
    status = await purges.status(purge_id)
    assert status.state is PurgeState.FAILED
    assert status.error_type == "AccessDenied"
    assert "finalize refused" in (status.last_error or "")
    assert fake.calls["chunk"] == 3


async def test_an_invalid_request_fails_at_once_and_its_queries_say_why(
    fake_worker: tuple[FakeSteps, PurgeClient], temporal_client: Client
) -> None:
    fake, _ = fake_worker
    handle = await temporal_client.start_workflow(
        WORKFLOW_TYPE,
        args=[{"catalog": "tests", "namespace": [], "table": ""}, None],
        id=f"icepurge-invalid-{uuid.uuid4().hex[:8]}",
        task_queue=QUEUE,
    )
    with pytest.raises(WorkflowFailureError) as failed:
        await handle.result()
    cause = failed.value.cause
    assert isinstance(cause, ApplicationError) and cause.type == "InvalidPurgeRequest"
    with pytest.raises(WorkflowQueryFailedError, match="invalid"):
        await handle.query(PurgeTableWorkflow.status)
    assert sum(fake.calls.values()) == 0


async def _start_paused(client: Client, table: str, budget: float | None) -> str:
    """A purge by snapshot started with the namespace purge's pause, in the same call."""
    purge_id = f"icepurge-{table}-{uuid.uuid4().hex[:8]}"
    await client.start_workflow(
        WORKFLOW_TYPE,
        args=[_snapshot(table).model_dump(mode="json"), None],
        id=purge_id,
        task_queue=QUEUE,
        start_signal=NAMESPACE_CONTROL_SIGNAL,
        start_signal_args=[TableControl(paused=True, bucket_requests_per_second=budget)],
    )
    return purge_id


async def test_a_pause_signalled_with_the_start_holds_the_deletes_until_resumed(
    fake_worker: tuple[FakeSteps, PurgeClient], temporal_client: Client
) -> None:
    """The namespace purge's control may come in the same breath as the start: the status it
    lands on exists from the workflow's first instant."""
    fake, purges = fake_worker
    purge_id = await _start_paused(temporal_client, "held", 5.0)
    held = await _until(purges, purge_id, lambda status: status.state is PurgeState.PAUSED)
    assert held.bucket_requests_per_second == 5.0
    assert fake.calls["chunk"] == 0
    await temporal_client.get_workflow_handle(purge_id).signal(
        NAMESPACE_CONTROL_SIGNAL, TableControl(paused=False, bucket_requests_per_second=5.0)
    )
    status = (await purges.wait(purge_id)).status
    assert status.state is PurgeState.SUCCEEDED
    assert fake.calls["chunk"] == 3


async def test_a_paused_purge_tells_its_sinks_it_stands_paused_and_where(
    fake_worker: tuple[FakeSteps, PurgeClient], temporal_client: Client
) -> None:
    """Its progress events came only as chunks ended, at most every progress interval: paused before
    a chunk ended, or within the interval of its last progress event, it told its sinks (its
    namespace purge among them) nothing of the pause, nor what the interval held back."""
    fake, purges = fake_worker
    purge_id = await _start_paused(temporal_client, "told", None)
    held = await _until(purges, purge_id, lambda status: status.state is PurgeState.PAUSED)

    async def told_paused() -> list[PurgeEvent]:
        return [
            event
            for event in fake.delivered
            if event.purge_id == purge_id
            and event.kind is EventKind.PROGRESS
            and event.state is PurgeState.PAUSED
        ]

    told = await eventually(told_paused, bool, seconds=10)
    assert (told[-1].files_done, told[-1].chunks_total) == (held.files_done, held.chunks_total)
    await temporal_client.get_workflow_handle(purge_id).signal(
        NAMESPACE_CONTROL_SIGNAL, TableControl(paused=False, bucket_requests_per_second=None)
    )
    assert (await purges.wait(purge_id)).status.state is PurgeState.SUCCEEDED


async def test_a_small_purge_by_snapshot_finished_by_its_plan_step_is_recorded_as_its_steps(
    fake_worker: tuple[FakeSteps, PurgeClient], temporal_client: Client
) -> None:
    """One activity guarded, deleted and finalized: the status holds each step's outcome, as the
    step-by-step path records them. A pause that comes with the start keeps the purge to the step
    by step path, whose deletes wait for the resume."""
    fake, purges = fake_worker
    fake.finishes_at_once = True
    status = (await purges.wait(await purges.start(_snapshot("small")))).status
    assert status.state is PurgeState.SUCCEEDED
    assert (fake.calls["plan"], fake.calls["guard"], fake.calls["chunk"], fake.calls["finalize"]) == (
        1,
        1,
        3,
        1,
    )
    assert (status.chunks_done, status.chunks_total) == (3, 3)
    assert status.files_done == 3 * FILES_PER_CHUNK + 1
    assert [guard.detail for guard in status.guards] == ["no live table"]
    assert status.report_location is not None

    purge_id = await _start_paused(temporal_client, "small-paused", None)
    await _until(purges, purge_id, lambda status: status.state is PurgeState.PAUSED)
    assert fake.calls["chunk"] == 3
    await temporal_client.get_workflow_handle(purge_id).signal(
        NAMESPACE_CONTROL_SIGNAL, TableControl(paused=False, bucket_requests_per_second=None)
    )
    assert (await purges.wait(purge_id)).status.state is PurgeState.SUCCEEDED
    assert (fake.calls["plan"], fake.calls["guard"], fake.calls["chunk"]) == (2, 2, 6)


def _scheduled_and_in_task(history: WorkflowHistory) -> tuple[list[str], list[str]]:
    """The activity types a run scheduled, and those it ran inside its workflow tasks."""
    scheduled = [
        event.activity_task_scheduled_event_attributes.activity_type.name
        for event in history.events
        if event.HasField("activity_task_scheduled_event_attributes")
    ]
    return scheduled, [kind for kind in map(local_activity_type, history.events) if kind is not None]


@pytest.mark.parametrize("fails_in_task", [False, True])
async def test_a_hold_that_fails_inside_the_workflow_task_goes_on_as_its_activity(
    fake_worker: tuple[FakeSteps, PurgeClient], temporal_client: Client, fails_in_task: bool
) -> None:
    """A catalog down for a moment fails the hold's attempt in the workflow task: the purge holds
    the table with the activity's attempts instead, and goes on."""
    fake, purges = fake_worker
    if fails_in_task:
        fake.fail_in_task = {steps.HOLD_TABLE.name}
    table = f"held-{uuid.uuid4().hex[:8]}"
    purge_id = await purges.purge_by_name(
        "tests", ["logic"], table, requested_by="pytest", options={"hold_namespace": "attic"}
    )
    status = (await purges.wait(purge_id)).status
    assert status.state is PurgeState.SUCCEEDED, status
    assert status.held_as == f"attic.{table}"
    history = await temporal_client.get_workflow_handle(purge_id).fetch_history()
    scheduled, in_task = _scheduled_and_in_task(history)
    assert in_task[0] == steps.HOLD_TABLE.name
    assert (steps.HOLD_TABLE.name in scheduled) is fails_in_task


async def test_an_undropped_soft_delete_registers_its_table_again_and_deletes_nothing(
    fake_worker: tuple[FakeSteps, PurgeClient],
) -> None:
    fake, purges = fake_worker
    table = f"soft-{uuid.uuid4().hex[:8]}"
    purge_id = await purges.purge_by_name(
        "tests", ["logic"], table, requested_by="pytest", options={"purge_after_seconds": 3600}
    )
    scheduled = await _until(purges, purge_id, lambda status: status.state is PurgeState.SCHEDULED)
    assert scheduled.scheduled_for is not None and scheduled.dropped_at is not None
    undropped = await purges.undrop(purge_id)
    assert undropped.undropped_note == "registered again"
    status = (await purges.wait(purge_id)).status
    assert status.state is PurgeState.UNDROPPED
    assert (fake.calls["load"], fake.calls["plan"], fake.calls["drop"], fake.calls["register"]) == (
        1,
        1,
        1,
        1,
    )
    assert fake.calls["chunk"] == fake.calls["finalize"] == 0


@pytest.mark.parametrize("batch_tables", [None, 0], ids=["batches", "a workflow per table"])
async def test_a_namespace_purge_counts_each_table_purges_outcome(
    fake_worker: tuple[FakeSteps, PurgeClient], batch_tables: int | None
) -> None:
    fake, purges = fake_worker
    fake.refuse["plan"] = lambda table: table == "bad"
    request = namespace_request(
        "tests",
        ["ns", uuid.uuid4().hex[:8]],
        requested_by="pytest",
        max_concurrent_tables=2,
        batch_tables=batch_tables,
    )
    purge_id = await purges.namespaces.start(request)
    status = (await purges.namespaces.wait(purge_id)).status
    assert status.state is NamespacePurgeState.SUCCEEDED_WITH_ERRORS
    assert (status.tables_total, status.tables_done, status.tables_failed) == (3, 2, 1)
    assert status.failure_sample[0].table.endswith("bad")
    assert status.namespaces_dropped == 1
    assert status.files.deleted == 2 * (3 * FILES_PER_CHUNK + 1)


@pytest.mark.parametrize("fails_in_task", [False, True])
async def test_a_namespace_purge_enumerates_and_tells_its_end_inside_workflow_tasks(
    fake_worker: tuple[FakeSteps, PurgeClient], temporal_client: Client, fails_in_task: bool
) -> None:
    """The enumeration and the final event each go first inside a workflow task, with no dispatch
    and no task after them; an attempt there that fails goes on as the activity, and the purge ends
    the same, its final event told once."""
    fake, purges = fake_worker
    if fails_in_task:
        fake.fail_in_task = {steps.ENUMERATE.name, steps.DELIVER_EVENTS.name}
    request = namespace_request("tests", ["ns", uuid.uuid4().hex[:8]], requested_by="pytest")
    purge_id = await purges.namespaces.start(request)
    status = (await purges.namespaces.wait(purge_id)).status
    assert status.state is NamespacePurgeState.SUCCEEDED
    assert (status.tables_total, status.tables_done) == (3, 3)
    history = await temporal_client.get_workflow_handle(purge_id).fetch_history()
    scheduled, in_task = _scheduled_and_in_task(history)
    assert in_task == [steps.ENUMERATE.name, steps.DELIVER_EVENTS.name]
    assert (steps.ENUMERATE.name in scheduled) is fails_in_task
    told = [event.kind for event in fake.delivered if event.purge_id == purge_id]
    assert told[0] is EventKind.STARTED and told[-1] is EventKind.COMPLETED
    assert told.count(EventKind.COMPLETED) == 1
    told_in_task = [event.kind for event in fake.delivered_in_task if event.purge_id == purge_id]
    assert told_in_task == ([] if fails_in_task else [EventKind.COMPLETED])


async def _split_replay(client: Client, workflow_id: str) -> tuple[int, Exception | None]:
    """How many of the closed run's steps inside the task commands of their task follow, and why
    its history, split after each (task_splits), fails to replay, or None."""
    history = json.loads((await client.get_workflow_handle(workflow_id).fetch_history()).to_json())
    split, splits = split_after_steps_in_task(history)
    return splits, await replay_failure(workflow_id, split)


async def test_a_purge_replays_though_the_code_after_its_steps_in_task_ran_in_a_task_of_its_own(
    fake_worker: tuple[FakeSteps, PurgeClient], temporal_client: Client
) -> None:
    """A query that comes just as a step inside the workflow task ends can end that task with the
    step's marker, and leave the code after the step to a task of its own (task_splits). Such a
    history of a namespace purge (a tree, or a workflow per table) failed to replay: on replay, the
    first patch consulted after the step read False. A held purge's did when a patch was first
    consulted after its hold (tests/histories/v197e6b2/table_purge_held, split)."""
    fake, purges = fake_worker
    tree = await purges.namespaces.start(
        namespace_request(
            "tests", ["ns", uuid.uuid4().hex[:8]], requested_by="pytest", batch_tables=1, range_tables=2
        )
    )
    per_table = await purges.namespaces.start(
        namespace_request("tests", ["ns", uuid.uuid4().hex[:8]], requested_by="pytest", batch_tables=0)
    )
    held = await purges.purge_by_name(
        "tests",
        ["logic"],
        f"held-{uuid.uuid4().hex[:8]}",
        requested_by="pytest",
        options={"hold_namespace": "attic"},
    )
    for purge_id in (tree, per_table):
        assert (await purges.namespaces.wait(purge_id)).status.state is NamespacePurgeState.SUCCEEDED
    assert (await purges.wait(held)).status.state is PurgeState.SUCCEEDED
    children = [
        event.start_child_workflow_execution_initiated_event_attributes.workflow_id
        async for event in temporal_client.get_workflow_handle(per_table).fetch_history_events()
        if event.HasField("start_child_workflow_execution_initiated_event_attributes")
    ]
    assert len(children) == fake.tables
    for workflow_id in (tree, per_table, held, *children):
        splits, failure = await _split_replay(temporal_client, workflow_id)
        assert splits > 0 and failure is None, (workflow_id, failure)


@pytest.mark.parametrize("batch_tables", [0, None])
async def test_a_namespace_purge_and_all_it_starts_run_on_the_bulk_queue_and_a_single_purge_on_its_own(
    fake_worker: tuple[FakeSteps, PurgeClient], temporal_client: Client, batch_tables: int | None
) -> None:
    """Single-table purges keep the task queue's activity slots: no batch or step of a bulk purge
    ever holds one."""
    fake, purges = fake_worker
    single = await purges.start(_snapshot("alone"))
    assert (await purges.wait(single)).status.state is PurgeState.SUCCEEDED
    alone = {queue for (_, queue) in fake.queues}
    fake.queues.clear()
    request = namespace_request(
        "tests", ["ns", uuid.uuid4().hex[:8]], requested_by="pytest", batch_tables=batch_tables
    )
    purge_id = await purges.namespaces.start(request)
    assert (await purges.namespaces.wait(purge_id)).status.state is NamespacePurgeState.SUCCEEDED
    bulk = f"{QUEUE}-bulk"
    assert alone == {QUEUE}
    assert {queue for (_, queue) in fake.queues} == {bulk}
    assert {step for (step, _) in fake.queues} >= {"enumerate", "plan", "drop_namespaces"}
    # A table purge workflow's steps run on its own workflow's queue: theirs is the bulk queue too.
    assert (await temporal_client.get_workflow_handle(purge_id).describe()).task_queue == bulk


async def test_a_batched_namespace_purge_keeps_under_200_bytes_of_history_a_table_and_yields(
    fake_worker: tuple[FakeSteps, PurgeClient], temporal_client: Client
) -> None:
    """A batch is named by its place in the table list and answers with counts: its history is
    the same few hundred bytes whatever its tables' names and reports (its input and result
    carried every table's request and report: ~3.3 KB a table)."""
    fake, purges = fake_worker
    fake.tables = 2_000
    request = namespace_request(
        "tests", ["ns", uuid.uuid4().hex[:8]], requested_by="pytest", max_concurrent_tables=16
    )
    purge_id = await purges.namespaces.start(request)
    status = (await purges.namespaces.wait(purge_id)).status
    assert (status.state, status.tables_done) == (NamespacePurgeState.SUCCEEDED, fake.tables)
    size = 0
    async for run in temporal_client.list_workflows(f"WorkflowId = '{purge_id}'"):
        history = await temporal_client.get_workflow_handle(purge_id, run_id=run.run_id).fetch_history()
        size += sum(event.ByteSize() for event in history.events)
        batches = [
            event.activity_task_scheduled_event_attributes
            for event in history.events
            if event.HasField("activity_task_scheduled_event_attributes")
            and event.activity_task_scheduled_event_attributes.activity_type.name
            == steps.PURGE_RANGE_BATCH.name
        ]
        assert all(batch.input.ByteSize() < 1_000 for batch in batches)
    assert size / fake.tables <= 200, size / fake.tables


async def _ranges_of(client: Client, purge_id: str) -> set[str]:
    """Each range's id once, however many runs its continue-as-new chain has."""
    return {
        listed.id
        async for listed in client.list_workflows(f"WorkflowType = '{TABLE_RANGE_WORKFLOW_TYPE}'")
        if listed.id.startswith(f"{purge_id}/range-")
    }


async def _range_status(client: Client, range_id: str) -> NamespacePurgeStatus:
    handle = client.get_workflow_handle(range_id, result_type=TableRangeReport)
    status: NamespacePurgeStatus = await handle.query(STATUS_QUERY, result_type=NamespacePurgeStatus)
    return status


async def test_a_namespace_purge_past_one_range_runs_as_a_tree_and_counts_every_table_once(
    fake_worker: tuple[FakeSteps, PurgeClient], temporal_client: Client
) -> None:
    """Ranges of 100 in windows of 16, 4 at once (a window of 64), every range and the namespace
    purge continuing as new (this server suggests it every 60 events): each table purged once,
    counted once, its batch listed under the namespace purge."""
    fake, purges = fake_worker
    fake.tables = 1_000
    fake.refuse["plan"] = lambda table: table == "bad"
    request = namespace_request(
        "tests",
        ["ns", uuid.uuid4().hex[:8]],
        requested_by="pytest",
        max_concurrent_tables=64,
        batch_tables=4,
        range_tables=100,
    )
    purge_id = await purges.namespaces.start(request)
    status = (await purges.namespaces.wait(purge_id)).status
    assert status.state is NamespacePurgeState.SUCCEEDED_WITH_ERRORS
    assert (status.tables_total, status.tables_done, status.tables_failed) == (1_000, 999, 1)
    assert (status.ranges_total, status.ranges_done, status.ranges_running, status.tables_running) == (
        10,
        10,
        0,
        0,
    )
    assert status.files.deleted == 999 * (3 * FILES_PER_CHUNK + 1)
    assert status.failure_sample[0].table.endswith("bad")
    assert set(fake.batched) == set(range(1_000)) and set(fake.batched.values()) == {1}
    assert fake.listed_under == Counter({purge_id: 250})
    assert len(await _ranges_of(temporal_client, purge_id)) == 10
    range_runs = [
        listed
        async for listed in temporal_client.list_workflows(f"WorkflowType = '{TABLE_RANGE_WORKFLOW_TYPE}'")
        if listed.id.startswith(f"{purge_id}/range-")
    ]
    assert status.run_count > 1 and len(range_runs) > 10


async def test_a_tree_s_table_purge_workflows_are_the_namespace_purge_s_children_in_its_listing(
    fake_worker: tuple[FakeSteps, PurgeClient],
) -> None:
    """A table purge workflow started by a range has the namespace purge as its parent, as the
    flat purge's would: `purge tables` lists it there."""
    _, purges = fake_worker
    request = namespace_request(
        "tests",
        ["ns", uuid.uuid4().hex[:8]],
        requested_by="pytest",
        batch_tables=0,
        range_tables=2,
        max_concurrent_tables=32,
    )
    purge_id = await purges.namespaces.start(request)
    status = (await purges.namespaces.wait(purge_id)).status
    assert (status.ranges_total, status.tables_done, status.tables_failed) == (2, 3, 0)
    listed = (await purges.namespace_tables(purge_id, page_size=10)).items
    assert sorted(str(item.table) for item in listed) == sorted(TABLE_NAMES)


async def _batches_started(
    fake: FakeSteps,
    purges: PurgeClient,
    *,
    tables: int,
    window: int,
    range_tables: int,
    options: dict[str, Any] | None = None,
) -> str:
    """A namespace purge whose batches of two tables each take 0.3 s, so it runs for seconds: a tree
    of ranges when `range_tables` is below `tables`."""
    fake.tables = tables
    fake.batch_seconds = 0.3
    request = namespace_request(
        "tests",
        ["ns", uuid.uuid4().hex[:8]],
        requested_by="pytest",
        max_concurrent_tables=window,
        batch_tables=2,
        range_tables=range_tables,
        options=options,
    )
    return await purges.namespaces.start(request)


def _tables_progress(fake: FakeSteps, purge_id: str) -> list[PurgeEvent]:
    """The namespace purge's progress events delivered so far that count a table done."""
    return [
        event
        for event in fake.delivered
        if event.purge_id == purge_id
        and event.kind is EventKind.PROGRESS
        and event.tables is not None
        and event.tables.done > 0
    ]


async def test_a_tree_counts_its_ranges_tables_live_and_its_pause_and_cancel_reach_every_range(
    fake_worker: tuple[FakeSteps, PurgeClient], temporal_client: Client
) -> None:
    fake, purges = fake_worker
    purge_id = await _batches_started(fake, purges, tables=400, window=32, range_tables=100)
    # Counted while its ranges run, from their signals: before any range ends.
    for _ in range(200):
        status = await purges.namespaces.status(purge_id)
        if status.tables_done:
            break
        await asyncio.sleep(0.05)
    assert status.tables_done > 0 and status.ranges_done == 0 and status.ranges_running == 2

    await purges.namespaces.pause(purge_id)
    ranges = await _ranges_of(temporal_client, purge_id)

    for _ in range(100):
        if all([(await _range_status(temporal_client, range_id)).paused for range_id in ranges]):
            break
        await asyncio.sleep(0.05)
    assert all([(await _range_status(temporal_client, range_id)).paused for range_id in ranges])
    # Once the batches running at the pause end, none starts.
    await asyncio.sleep(fake.batch_seconds * 2)
    held = sum(fake.batched.values())
    await asyncio.sleep(fake.batch_seconds * 3)
    assert sum(fake.batched.values()) == held < fake.tables

    await purges.namespaces.resume(purge_id)
    for _ in range(200):
        if sum(fake.batched.values()) > held:
            break
        await asyncio.sleep(0.05)
    await temporal_client.get_workflow_handle(purge_id).cancel()
    with pytest.raises(PurgeFailedError):
        await purges.namespaces.wait(purge_id)
    status = await purges.namespaces.status(purge_id)
    started = sum(fake.batched.values())
    assert status.state is NamespacePurgeState.CANCELLED
    # Every batch the ranges ran is counted; none runs after the close.
    assert status.tables_done == started < fake.tables
    await asyncio.sleep(fake.batch_seconds * 2)
    assert sum(fake.batched.values()) == started
    for range_id in await _ranges_of(temporal_client, purge_id):
        description = await temporal_client.get_workflow_handle(range_id).describe()
        assert description.status is not None and description.status.name != "RUNNING"


async def test_a_paused_tree_s_status_counts_every_table_that_ended_and_none_running(
    fake_worker: tuple[FakeSteps, PurgeClient],
) -> None:
    """A range tells its tallies at most every RANGE_PROGRESS_SECONDS. Paused, its last batches end
    within that interval of its last signal, and no batch ends after them: the namespace purge's
    status still showed the tables those batches held as running (64 of a 10^5 purge, for as long
    as it stood paused), and not as done. The held-back tallies now follow once the interval is up."""
    fake, purges = fake_worker
    purge_id = await _batches_started(fake, purges, tables=400, window=32, range_tables=100)
    await eventually(lambda: purges.namespaces.status(purge_id), lambda status: status.tables_done > 0)
    await purges.namespaces.pause(purge_id)
    await asyncio.sleep(fake.batch_seconds * 2)
    held = sum(fake.batched.values())
    status = await eventually(
        lambda: purges.namespaces.status(purge_id),
        lambda status: (status.tables_done, status.tables_running) == (held, 0),
        seconds=RANGE_PROGRESS_SECONDS * 3,
    )
    assert status.paused and held < fake.tables
    await purges.namespaces.resume(purge_id)
    status = (await purges.namespaces.wait(purge_id)).status
    assert (status.state, status.tables_done) == (NamespacePurgeState.SUCCEEDED, 400)
    assert status.tables_running == 0


async def test_a_tree_s_events_tell_its_progress_while_its_ranges_run(
    fake_worker: tuple[FakeSteps, PurgeClient],
) -> None:
    """Its ranges' tallies reached the namespace purge's status, but its events only when a range
    ended: a 10^5-table tree's two ranges run side by side and end near its close, ~50 minutes on."""
    fake, purges = fake_worker
    purge_id = await _batches_started(
        fake, purges, tables=800, window=32, range_tables=400, options={"progress_event_seconds": 1}
    )

    async def status_and_events() -> tuple[NamespacePurgeStatus, list[PurgeEvent]]:
        return await purges.namespaces.status(purge_id), _tables_progress(fake, purge_id)

    status, events = await eventually(status_and_events, lambda found: len(found[1]) >= 2, seconds=30)
    assert status.ranges_done == 0
    assert events[0].tables is not None and events[-1].tables is not None
    assert events[0].tables.done < events[-1].tables.done
    status = (await purges.namespaces.wait(purge_id)).status
    assert (status.state, status.tables_done) == (NamespacePurgeState.SUCCEEDED, 800)


@pytest.mark.parametrize(("tables", "window"), [(40, 2), (800, 32)], ids=["window-2", "window-32"])
async def test_a_paused_namespace_purge_s_events_catch_up_with_its_status(
    fake_worker: tuple[FakeSteps, PurgeClient],
    tables: int,
    window: int,
) -> None:
    """Its progress events follow its rounds, at most every progress interval. Paused right after
    one, its last batches ended within the interval and no round ended after them: its sinks heard
    of fewer tables done, and some running, for as long as it stood paused. Its run may also end as
    it drains (this server suggests continuing as new every CONTINUE_AS_NEW_EVENTS): then the next
    run starts paused, with nothing to tell."""
    fake, purges = fake_worker
    purge_id = await _batches_started(
        fake, purges, tables=tables, window=window, range_tables=1_000, options={"progress_event_seconds": 5}
    )

    async def progress_told() -> list[PurgeEvent]:
        return _tables_progress(fake, purge_id)

    await eventually(progress_told, bool, seconds=30)
    await purges.namespaces.pause(purge_id)
    status = await eventually(
        lambda: purges.namespaces.status(purge_id),
        lambda status: status.paused and status.tables_running == 0,
        seconds=10,
    )
    told = await eventually(
        progress_told,
        lambda found: found[-1].tables is not None and found[-1].tables.done == status.tables_done,
        seconds=15,
    )
    assert told[-1].tables is not None and told[-1].tables.running == 0
    assert status.tables_done < fake.tables
    await purges.namespaces.resume(purge_id)
    status = (await purges.namespaces.wait(purge_id)).status
    assert (status.state, status.tables_done) == (NamespacePurgeState.SUCCEEDED, tables)


@pytest.mark.parametrize("range_tables", [1_000, 2], ids=["flat", "tree"])
async def test_a_paused_namespace_purge_counts_what_its_tables_own_workflows_deleted(
    fake_worker: tuple[FakeSteps, PurgeClient], range_tables: int
) -> None:
    """A table purged by a workflow of its own tells its namespace purge (or its range) its counts by
    its progress events, at most every interval, and a range passes them on as a table ends. Paused,
    such a table told nothing more, and no table ended: the namespace purge's files, and its events,
    stayed behind what its tables had deleted for as long as it stood paused."""
    fake, purges = fake_worker
    fake.tables, fake.chunks, fake.chunk_seconds = 4, 6, 1.0
    request = namespace_request(
        "tests",
        ["ns", uuid.uuid4().hex[:8]],
        requested_by="pytest",
        max_concurrent_tables=4,
        batch_tables=1,
        range_tables=range_tables,
        options={"progress_event_seconds": 5, "chunk_window": 1, "express_lane": False},
    )
    purge_id = await purges.namespaces.start(request)

    async def tables_files_done() -> list[int]:
        table_purges = {purge for purge, _ in fake.chunk_calls if purge != purge_id}
        return [(await purges.status(purge)).files_done for purge in sorted(table_purges)]

    await eventually(
        tables_files_done, lambda done: len(done) == 4 and min(done) >= 2 * FILES_PER_CHUNK, seconds=30
    )
    await purges.namespaces.pause(purge_id)
    await asyncio.sleep(fake.chunk_seconds * 2)
    deleted = sum(await tables_files_done())
    assert deleted < 4 * fake.chunks * FILES_PER_CHUNK
    status = await eventually(
        lambda: purges.namespaces.status(purge_id), lambda status: status.files.done == deleted, seconds=20
    )
    assert status.paused

    async def files_told() -> list[int]:
        return [
            event.files_done
            for event in fake.delivered
            if event.purge_id == purge_id and event.kind is EventKind.PROGRESS
        ]

    await eventually(files_told, lambda told: bool(told) and told[-1] == deleted, seconds=20)
    assert sum(await tables_files_done()) == deleted
    await purges.namespaces.resume(purge_id)
    status = (await purges.namespaces.wait(purge_id)).status
    assert (status.state, status.tables_done) == (NamespacePurgeState.SUCCEEDED, 4)


async def test_a_tree_of_fewer_ranges_than_its_window_has_room_for_shares_the_whole_window_and_budget(
    fake_worker: tuple[FakeSteps, PurgeClient], temporal_client: Client
) -> None:
    """A window of 64 has room for four ranges of 16 units: its two ranges run 32 units and half
    the budget each, where each ran 16 and a quarter, and half the window and budget stood idle."""
    fake, purges = fake_worker
    purge_id = await _batches_started(fake, purges, tables=1_600, window=64, range_tables=800)
    await eventually(lambda: purges.namespaces.status(purge_id), lambda status: status.ranges_running == 2)
    await purges.namespaces.set_rate_budget(purge_id, 100.0)
    ranges = sorted(await _ranges_of(temporal_client, purge_id))
    assert len(ranges) == 2

    async def shares() -> list[tuple[int, float | None]]:
        statuses = [await _range_status(temporal_client, range_id) for range_id in ranges]
        return [(status.max_concurrent_tables, status.bucket_requests_per_second) for status in statuses]

    await eventually(shares, lambda found: found == [(32, 50.0), (32, 50.0)])
    status = (await purges.namespaces.wait(purge_id)).status
    assert (status.state, status.tables_done, status.ranges_done) == (NamespacePurgeState.SUCCEEDED, 1_600, 2)
    assert set(fake.batched) == set(range(1_600)) and set(fake.batched.values()) == {1}


async def test_a_cancelled_namespace_purge_cancels_its_batches_in_the_order_it_started_them(
    fake_worker: tuple[FakeSteps, PurgeClient], temporal_client: Client
) -> None:
    """The commands must be the same on a replay by another worker: a window kept as a set of
    tasks cancelled them in the order of their memory addresses (64 tasks in a set iterate out of
    their start order every time, tried here)."""
    fake, purges = fake_worker
    fake.tables = 128
    fake.batch_seconds = 3.0
    request = namespace_request(
        "tests", ["ns", uuid.uuid4().hex[:8]], requested_by="pytest", max_concurrent_tables=64, batch_tables=2
    )
    purge_id = await purges.namespaces.start(request)
    handle = temporal_client.get_workflow_handle(purge_id)

    def batches_scheduled(events: Sequence[HistoryEvent]) -> list[int]:
        return [
            event.event_id
            for event in events
            if event.HasField("activity_task_scheduled_event_attributes")
            and event.activity_task_scheduled_event_attributes.activity_type.name
            == steps.PURGE_RANGE_BATCH.name
        ]

    for _ in range(100):
        if len(batches_scheduled((await handle.fetch_history()).events)) == 64:
            break
        await asyncio.sleep(0.05)
    await handle.cancel()
    with pytest.raises(PurgeFailedError):
        await purges.namespaces.wait(purge_id)
    events = (await handle.fetch_history()).events
    requested = [
        event.activity_task_cancel_requested_event_attributes.scheduled_event_id
        for event in events
        if event.HasField("activity_task_cancel_requested_event_attributes")
    ]
    assert len(requested) == 64
    assert requested == batches_scheduled(events)


async def test_a_terminated_purge_shows_closed_and_why(
    fake_worker: tuple[FakeSteps, PurgeClient], temporal_client: Client
) -> None:
    """Its last queried status stood SCHEDULED: shown as it was, it looked running forever."""
    _, purges = fake_worker
    table = f"terminated-{uuid.uuid4().hex[:8]}"
    purge_id = await purges.purge_by_name(
        "tests", ["logic"], table, requested_by="pytest", options={"purge_after_seconds": 3600}
    )
    await _until(purges, purge_id, lambda status: status.state is PurgeState.SCHEDULED)
    await temporal_client.get_workflow_handle(purge_id).terminate(reason="an operator stopped it by hand")

    status = await purges.status(purge_id)
    assert status.finished_at is not None
    assert status.state is PurgeState.FAILED
    assert status.last_error == (
        "its workflow was terminated: an operator stopped it by hand; what it had not deleted stays: "
        f"icepurge purge rerun {purge_id} finishes it"
    )
    assert status.error_type == ERROR_CLOSED_BY_SERVER
    # Listed as its status shows it (visibility catches up within moments).
    for _ in range(100):
        listed = (await purges.list(PurgeFilter(table=table))).items
        if listed and listed[0].closed_at is not None:
            break
        await asyncio.sleep(0.1)
    assert [(summary.state, summary.error) for summary in listed] == [
        ("FAILED", "its workflow was terminated")
    ]


async def test_a_terminated_namespace_purge_shows_closed_and_why(
    fake_worker: tuple[FakeSteps, PurgeClient], temporal_client: Client
) -> None:
    _, purges = fake_worker
    request = namespace_request(
        "tests", ["ns", uuid.uuid4().hex[:8]], requested_by="pytest", options={"purge_after_seconds": 3600}
    )
    purge_id = await purges.namespaces.start(request)
    for _ in range(200):
        if (await purges.namespaces.status(purge_id)).state is NamespacePurgeState.PURGING:
            break
        await asyncio.sleep(0.05)
    await temporal_client.get_workflow_handle(purge_id).terminate(reason="stopped by hand")

    status = await purges.namespaces.status(purge_id)
    assert status.finished_at is not None
    assert status.state is NamespacePurgeState.FAILED
    assert status.last_error == (
        "its workflow was terminated: stopped by hand; what it had not purged stays: start the "
        "namespace purge again to purge the rest"
    )
