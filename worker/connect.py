"""The Temporal client every icepurge process uses: same address, same data converter."""

from __future__ import annotations

from temporalio.client import Client
from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.runtime import PrometheusConfig, Runtime, TelemetryConfig

from worker.settings import TemporalSettings


async def connect(settings: TemporalSettings, metrics_address: str | None = None) -> Client:
    """With `metrics_address`, the client's runtime serves Prometheus /metrics there: the SDK's
    metrics and those icepurge records through the activity metric meter."""
    runtime = None
    if metrics_address:
        prometheus = PrometheusConfig(bind_address=metrics_address, durations_as_seconds=True)
        runtime = Runtime(telemetry=TelemetryConfig(metrics=prometheus))
    return await Client.connect(
        settings.temporal_address,
        namespace=settings.temporal_namespace,
        data_converter=pydantic_data_converter,
        runtime=runtime,
    )
