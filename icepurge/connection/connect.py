"""The Temporal client every icepurge process uses: same address, same data converter (and
payload codec, when keys are configured)."""

from __future__ import annotations

import dataclasses
import logging

from temporalio.client import Client
from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.runtime import PrometheusConfig, Runtime, TelemetryConfig

from icepurge.connection.connect_failures import connect_failure
from icepurge.connection.settings import TemporalSettings
from icepurge.connection.temporal_target import temporal_target
from icepurge.connection.tracing import tracing_interceptors

log = logging.getLogger(__name__)


async def connect(
    settings: TemporalSettings, metrics_address: str | None = None, *, warn_plaintext: bool = True
) -> Client:
    """With `metrics_address`, the client's runtime serves Prometheus /metrics there: the SDK's
    metrics and those icepurge records through the activity metric meter. A reader (the CLI)
    passes warn_plaintext=False: it writes no credentials, and a sealed payload it can't open
    is an error that names the fix."""
    runtime = None
    if metrics_address:
        prometheus = PrometheusConfig(bind_address=metrics_address, durations_as_seconds=True)
        runtime = Runtime(telemetry=TelemetryConfig(metrics=prometheus))
    codec = settings.payload_codec()
    if codec is None and warn_plaintext:
        log.warning("ICEPURGE_CODEC_KEYS unset: FileIO credentials sit in Temporal history unencrypted")
    target = temporal_target(settings)
    try:
        return await Client.connect(
            target.address,
            namespace=target.namespace,
            data_converter=dataclasses.replace(pydantic_data_converter, payload_codec=codec),
            runtime=runtime,
            tls=target.tls,
            api_key=target.api_key,
            rpc_metadata=dict(target.rpc_metadata),
            interceptors=tracing_interceptors(),
        )
    except RuntimeError as error:
        raise connect_failure(target, str(error)) from None
