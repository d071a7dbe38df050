"""Traces over OTLP: an API call and a front door DELETE each make one trace through the purge's
workflow to its activities, across the API and worker processes, every span about the purge
naming it; a process with no endpoint configured sets nothing up."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from collections.abc import Iterator

import httpx
import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from pyiceberg.catalog.rest import RestCatalog
from pyiceberg.catalog.sql import SqlCatalog

from icepurge.api.clients.temporal_client import PurgeClient
from icepurge.api.server.front_door.drops import TableId
from icepurge.api.server.settings import ApiSettings
from icepurge.connection.purge_id_spans import PurgeIdSpans
from icepurge.connection.tracing import PURGE_ID_ATTRIBUTE, WORKFLOW_ID_ATTRIBUTE, tracing_configured
from icepurge.contract.names import (
    FINISH_SMALL_PURGE_ACTIVITY,
    LOAD_PLAN_AND_DROP_ACTIVITY,
    PLAN_AND_FINISH_ACTIVITY,
)
from icepurge.contract.purge_id import purge_id_for
from icepurge.contract.range_steps import range_id
from icepurge.contract.states import PurgeState
from icepurge.devstack.free_ports import free_ports
from icepurge.devstack.process import WORKER_READY, stop_together
from icepurge.devstack.stack import EmbeddedStack
from tests.api_server import TOKENS, bearer
from tests.conftest import REST_CATALOG, REST_TABLE_BUCKET
from tests.otlp_receiver import ReceivedSpan, ReceivedSpans, otlp_receiver
from tests.purge_helpers import eventually, request_for
from tests.store import S3Store
from tests.tables import simple_table

QUEUE = "icepurge-tracing"
NAMESPACE = "traced"


class TracedServices:
    """An API and a worker process on their own task queue, exporting to the test's receiver."""

    def __init__(self, stack: EmbeddedStack, settings: ApiSettings, endpoint: str) -> None:
        tracing = {"OTEL_EXPORTER_OTLP_ENDPOINT": endpoint, "OTEL_BSP_SCHEDULE_DELAY": "100"}
        port = free_ports(1)[0]
        self.url = f"http://127.0.0.1:{port}"
        self.api = stack.api_process(
            ICEPURGE_API_PORT=str(port),
            ICEPURGE_API_AUTH_FILE=str(settings.api_auth_file),
            ICEPURGE_TASK_QUEUE=QUEUE,
            ICEPURGE_FRONT_DOOR=json.dumps({REST_CATALOG: {}}),
            **tracing,
        )
        self.worker = stack.worker_process("traced-worker", ICEPURGE_TASK_QUEUE=QUEUE, **tracing)

    def start(self) -> None:
        self.api.start()
        self.worker.start()
        self.api.wait_for_port(int(self.url.rsplit(":", 1)[1]))
        self.worker.wait_for_log(WORKER_READY)

    def stop(self) -> None:
        # SIGTERM, with its grace: each process flushes the spans it still holds.
        stop_together([self.api, self.worker], grace=10.0)


@pytest.fixture(scope="module")
def traced(stack: EmbeddedStack, api_settings: ApiSettings) -> Iterator[tuple[TracedServices, ReceivedSpans]]:
    with otlp_receiver() as (endpoint, spans):
        services = TracedServices(stack, api_settings, endpoint)
        services.start()
        try:
            yield services, spans
        finally:
            services.stop()


def _one_trace(spans: list[ReceivedSpan], root: ReceivedSpan) -> list[ReceivedSpan]:
    return [span for span in spans if span.trace_id == root.trace_id]


async def _trace_of(spans: ReceivedSpans, method: str, purge_id: str, activity: str) -> list[ReceivedSpan]:
    """The trace of the `method` request that reached `purge_id`, once it holds the workflow's run
    and `activity`'s (each process exports its spans a batch at a time)."""

    def request_of(received: list[ReceivedSpan]) -> ReceivedSpan | None:
        return next(
            (
                span
                for span in received
                if span.name.startswith(method) and span.attributes.get(PURGE_ID_ATTRIBUTE) == purge_id
            ),
            None,
        )

    def whole(received: list[ReceivedSpan]) -> bool:
        request = request_of(received)
        names = {span.name for span in _one_trace(received, request)} if request else set()
        return {"RunWorkflow:PurgeTable", f"RunActivity:{activity}"} <= names

    async def read() -> list[ReceivedSpan]:
        return spans.all()

    received = await eventually(read, whole, seconds=30)
    request = request_of(received)
    assert request is not None
    return _one_trace(received, request)


async def test_an_api_call_is_one_trace_through_the_workflow_to_its_activities(
    traced: tuple[TracedServices, ReceivedSpans], catalog: SqlCatalog, s3: S3Store, purges: PurgeClient
) -> None:
    services, spans = traced
    table = simple_table(catalog, (NAMESPACE,), f"api{uuid.uuid4().hex[:6]}", appends=2)
    request = request_for(table, s3.properties)
    async with httpx.AsyncClient(timeout=30) as http:
        answer = await http.post(
            f"{services.url}/v1/purges", json=request.model_dump(mode="json"), headers=bearer("admin")
        )
    assert answer.status_code == 202, answer.text
    purge_id = answer.json()["purge_id"]
    assert purge_id == purge_id_for(request)
    assert (await purges.wait(purge_id)).status.state is PurgeState.SUCCEEDED

    trace = await _trace_of(spans, "POST", purge_id, PLAN_AND_FINISH_ACTIVITY)
    by_name = {span.name: span for span in trace}
    assert {"StartWorkflow:PurgeTable", "RunWorkflow:PurgeTable"} <= set(by_name)
    assert {span.service for span in trace} == {"icepurge-api", "icepurge-worker"}
    # The API's start is a child of its request's span; the workflow's run, the activity's
    # scheduling by the workflow and its run on the worker descend from that start.
    request_span = next(span for span in trace if span.parent_id == "")
    assert request_span.name == "POST /v1/purges"
    start = by_name["StartWorkflow:PurgeTable"]
    assert start.parent_id == request_span.span_id
    step = PLAN_AND_FINISH_ACTIVITY
    for name in ("RunWorkflow:PurgeTable", f"StartActivity:{step}", f"RunActivity:{step}"):
        assert start.span_id in _ancestors(trace, by_name[name]), name
    assert by_name[f"RunActivity:{step}"].parent_id == by_name[f"StartActivity:{step}"].span_id
    temporal = [span for span in trace if WORKFLOW_ID_ATTRIBUTE in span.attributes]
    assert temporal and all(span.attributes[PURGE_ID_ATTRIBUTE] == purge_id for span in temporal)
    assert request_span.attributes[PURGE_ID_ATTRIBUTE] == purge_id


async def test_a_front_door_drop_is_one_trace_through_the_purge(
    traced: tuple[TracedServices, ReceivedSpans],
    rest_upstream: RestCatalog,
    stack: EmbeddedStack,
    s3: S3Store,
    purges: PurgeClient,
) -> None:
    services, spans = traced
    rest_upstream.create_namespace_if_not_exists((NAMESPACE,))
    name = f"door{uuid.uuid4().hex[:6]}"
    table = simple_table(rest_upstream, (NAMESPACE,), name, appends=2)
    door = RestCatalog(
        "traced-door",
        uri=f"{services.url}/iceberg/{REST_CATALOG}",
        token=TOKENS["bucket-dropper"][0],
        warehouse=f"s3://{REST_TABLE_BUCKET}/",
        **stack.s3_properties,
    )
    door.purge_table((NAMESPACE, name))
    purge_id = TableId(REST_CATALOG, [NAMESPACE], name).purge_id()
    assert (await purges.wait(purge_id)).status.state is PurgeState.SUCCEEDED
    assert s3.list(table.location()) == set()

    trace = await _trace_of(spans, "DELETE", purge_id, FINISH_SMALL_PURGE_ACTIVITY)
    names = {span.name for span in trace}
    assert f"RunActivity:{LOAD_PLAN_AND_DROP_ACTIVITY}" in names
    assert {span.service for span in trace} == {"icepurge-api", "icepurge-worker"}
    temporal = [span for span in trace if WORKFLOW_ID_ATTRIBUTE in span.attributes]
    assert temporal and all(span.attributes[PURGE_ID_ATTRIBUTE] == purge_id for span in temporal)


def _ancestors(trace: list[ReceivedSpan], span: ReceivedSpan) -> list[str]:
    parents = {item.span_id: item.parent_id for item in trace}
    chain, parent = [], span.parent_id
    while parent:
        chain.append(parent)
        parent = parents.get(parent, "")
    return chain


def test_every_span_about_a_workflow_names_its_purge() -> None:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(PurgeIdSpans(WORKFLOW_ID_ATTRIBUTE, PURGE_ID_ATTRIBUTE))
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer(__name__)
    root = "icepurge-ns-lake.sales-0123"
    for workflow_id in ("icepurge-lake.sales.orders-4567", range_id(root, "run", 3)):
        with tracer.start_as_current_span(
            "RunActivity:plan", attributes={WORKFLOW_ID_ATTRIBUTE: workflow_id}
        ):
            pass
    with tracer.start_as_current_span("GET /healthz"):
        pass
    named = [(span.attributes or {}).get(PURGE_ID_ATTRIBUTE) for span in exporter.get_finished_spans()]
    assert named == ["icepurge-lake.sales.orders-4567", root, None]


@pytest.mark.parametrize(
    ("environ", "configured"),
    [
        ({}, False),
        ({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"}, True),
        ({"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://127.0.0.1:4318/v1/traces"}, True),
        ({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318", "OTEL_SDK_DISABLED": "true"}, False),
        ({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318", "OTEL_TRACES_EXPORTER": "none"}, False),
        ({"OTEL_EXPORTER_OTLP_ENDPOINT": " "}, False),
    ],
)
def test_tracing_is_on_only_where_an_endpoint_is_configured(
    environ: dict[str, str], configured: bool
) -> None:
    assert tracing_configured(environ) is configured


def test_a_process_with_no_endpoint_sets_no_tracing_up() -> None:
    """Off by default: the worker's and the API's start import no SDK and export nothing."""
    code = (
        "import sys\n"
        "from icepurge.connection.tracing import start_tracing, tracing_interceptors\n"
        "traced = start_tracing('icepurge-worker')\n"
        "print(traced, tracing_interceptors(), 'opentelemetry.sdk' in sys.modules)\n"
    )
    environ = {key: value for key, value in os.environ.items() if not key.startswith("OTEL_")}
    out = subprocess.run(
        [sys.executable, "-c", code], env=environ, capture_output=True, text=True, check=True
    )
    assert out.stdout.split() == ["False", "[]", "False"]
