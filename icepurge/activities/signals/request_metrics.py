"""Timings the activities record through the SDK's meter (served on the worker's /metrics)."""

from __future__ import annotations

from temporalio import activity


class RequestMetrics:
    """Create inside an activity; `request_latency` may then be called from any thread."""

    def __init__(self, engine: str) -> None:
        meter = activity.metric_meter().with_additional_attributes({"engine": engine})
        self._latency = meter.create_histogram_float(
            "icepurge_delete_request_latency", "One delete request (a DeleteObjects batch or one file).", "s"
        )
        self._chunk = meter.create_histogram_float(
            "icepurge_chunk_duration", "One attempt at a chunk, start to end.", "s"
        )

    def request_latency(self, seconds: float) -> None:
        self._latency.record(seconds)

    def chunk_duration(self, seconds: float) -> None:
        self._chunk.record(seconds)
