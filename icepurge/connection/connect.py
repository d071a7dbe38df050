"""The Temporal client every icepurge process uses: same address, same data converter (and
payload codec, when keys are configured)."""

from __future__ import annotations

import dataclasses
import logging

from temporalio.client import Client
from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.runtime import PrometheusConfig, Runtime, TelemetryConfig

from icepurge.connection.errors import TemporalUnreachableError
from icepurge.connection.settings import TemporalSettings

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
    try:
        return await Client.connect(
            settings.temporal_address,
            namespace=settings.temporal_namespace,
            data_converter=dataclasses.replace(pydantic_data_converter, payload_codec=codec),
            runtime=runtime,
        )
    except RuntimeError as error:
        refused = "refused" if "Connection refused" in str(error) else "not answering"
        raise TemporalUnreachableError(
            f"Temporal {refused} at {settings.temporal_address}: start it (`make run`) or set "
            "ICEPURGE_TEMPORAL_ADDRESS (and ICEPURGE_TEMPORAL_NAMESPACE) to your cluster's"
        ) from None
