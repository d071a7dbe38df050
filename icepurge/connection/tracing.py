"""OpenTelemetry traces of purges, off unless an OTLP endpoint is configured.

A process that traces exports its spans over OTLP/HTTP to the endpoint the standard variables name
(`OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` or `OTEL_EXPORTER_OTLP_ENDPOINT`, with the exporter's other
`OTEL_*` settings). Temporal's TracingInterceptor carries the trace from the API's call through
the workflow to its activities, and every span about a purge's workflow carries the purge id
(`icepurge.purge_id`), the HTTP request's span included. Without an endpoint nothing is imported,
set up or exported."""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from typing import Any

from temporalio.client import (
    Interceptor,
    OutboundInterceptor,
    QueryWorkflowInput,
    SignalWorkflowInput,
    StartWorkflowInput,
    StartWorkflowUpdateInput,
    StartWorkflowUpdateWithStartInput,
    WorkflowHandle,
    WorkflowUpdateHandle,
)

from icepurge.contract.range_steps import purge_of

log = logging.getLogger(__name__)

ENDPOINT_VARIABLES = ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT")
PURGE_ID_ATTRIBUTE = "icepurge.purge_id"
# The attribute Temporal's TracingInterceptor gives every span about a workflow: a purge's
# workflow id is its purge id.
WORKFLOW_ID_ATTRIBUTE = "temporalWorkflowID"

_active: list[Interceptor] = []


class TracingUnavailableError(RuntimeError):
    """An OTLP endpoint is configured, but the tracing packages are not installed."""


def tracing_configured(environ: Mapping[str, str] = os.environ) -> bool:
    if environ.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return False
    if environ.get("OTEL_TRACES_EXPORTER", "otlp").strip().lower() == "none":
        return False
    return any(environ.get(name, "").strip() for name in ENDPOINT_VARIABLES)


def start_tracing(service_name: str) -> bool:
    """Sets this process's tracer provider up when an endpoint is configured (once: later calls
    keep the first); says whether the process traces."""
    if _active or not tracing_configured():
        return bool(_active)
    try:
        from opentelemetry import trace
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.resources import SERVICE_NAME, Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor
        from temporalio.contrib.opentelemetry import TracingInterceptor
    except ImportError as missing:
        raise TracingUnavailableError(
            f"an OTLP endpoint is set ({', '.join(ENDPOINT_VARIABLES)}) but tracing is not installed "
            f"({missing.name}): install icepurge[tracing], or unset the endpoint"
        ) from None
    from icepurge.connection.purge_id_spans import PurgeIdSpans

    # OTEL_SERVICE_NAME, when set, names the service; the SDK reads it itself.
    named = {} if os.environ.get("OTEL_SERVICE_NAME") else {SERVICE_NAME: service_name}
    provider = TracerProvider(resource=Resource.create(named))
    provider.add_span_processor(PurgeIdSpans(WORKFLOW_ID_ATTRIBUTE, PURGE_ID_ATTRIBUTE))
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    trace.set_tracer_provider(provider)
    _active.extend([_PurgeIdOnCaller(), TracingInterceptor()])
    log.info("tracing %s to %s", service_name, _endpoint())
    return True


def tracing_interceptors() -> list[Interceptor]:
    """The client interceptors of a process that traces (none otherwise): the first names the
    purge on the caller's span (an HTTP request's), the second traces the calls themselves."""
    return list(_active)


def _endpoint() -> str:
    return next(os.environ[name] for name in ENDPOINT_VARIABLES if os.environ.get(name, "").strip())


class _PurgeIdOnCaller(Interceptor):
    def intercept_client(self, next: OutboundInterceptor) -> OutboundInterceptor:
        return _PurgeIdOutbound(next)


class _PurgeIdOutbound(OutboundInterceptor):
    """The span current when a caller reaches a purge (an HTTP request's) gets its purge id."""

    async def start_workflow(self, input: StartWorkflowInput) -> WorkflowHandle[Any, Any]:
        _name_purge(input.id)
        return await super().start_workflow(input)

    async def start_update_with_start_workflow(
        self, input: StartWorkflowUpdateWithStartInput
    ) -> WorkflowUpdateHandle[Any]:
        _name_purge(input.start_workflow_input.id)
        return await super().start_update_with_start_workflow(input)

    async def signal_workflow(self, input: SignalWorkflowInput) -> None:
        _name_purge(input.id)
        return await super().signal_workflow(input)

    async def query_workflow(self, input: QueryWorkflowInput) -> Any:
        _name_purge(input.id)
        return await super().query_workflow(input)

    async def start_workflow_update(self, input: StartWorkflowUpdateInput) -> WorkflowUpdateHandle[Any]:
        _name_purge(input.id)
        return await super().start_workflow_update(input)


def _name_purge(purge_id: str) -> None:
    from opentelemetry import trace

    trace.get_current_span().set_attribute(PURGE_ID_ATTRIBUTE, purge_of(purge_id))
