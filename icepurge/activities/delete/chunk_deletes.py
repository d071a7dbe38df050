"""Deleting one chunk of a plan: its files read from the state location, run on the engine the
plan chose, resumed from a checkpoint or from the chunk's own outcome object. The chunk step, the
express lane and a batch's tables all delete here."""

from __future__ import annotations

import threading
import time
from collections import OrderedDict

from temporalio import activity

from icepurge.activities.delete.chunk_deleter import chunk_outcome_uri
from icepurge.activities.delete.engine import ChunkEngines, ChunkWork
from icepurge.activities.plan.chunk_context import read_chunk_context
from icepurge.activities.plan.plan_model import (
    ChunkContext,
    ContentChunk,
    ContentFile,
    content_chunk_uri,
    context_uri,
)
from icepurge.activities.settings import StepContext
from icepurge.activities.signals.progress_signals import ProgressReport
from icepurge.activities.signals.request_metrics import RequestMetrics
from icepurge.activities.state_objects import missing_state_object
from icepurge.contract.names import FAILURE_SAMPLE_SIZE
from icepurge.contract.steps import ChunkCheckpoint, ChunkInput, ChunkResult

_CONTEXT_CACHE_SIZE = 8


class ChunkDeletes:
    def __init__(self, context: StepContext, engines: ChunkEngines) -> None:
        self._state = context.state
        self._engines = engines
        self._signals = context.signals
        self._heartbeat = context.heartbeat
        self._contexts: OrderedDict[str, ChunkContext] = OrderedDict()
        self._contexts_lock = threading.Lock()

    def delete_chunk_from(
        self, step: ChunkInput, checkpoint: ChunkCheckpoint, signalling: bool = True
    ) -> ChunkResult:
        """From `checkpoint`, or from the chunk's own outcome object where that is further on.
        Without `signalling`, no progress signal: each is an event in the purge's history."""
        engine = self._engines.engine(step.engine)
        metrics = RequestMetrics(step.engine.value)
        started = time.monotonic()
        quiet = ProgressReport(1.0, None)
        with self._progress_report(step.chunk_index) if signalling else quiet as report:
            outcome, stats = engine.run_chunk(
                ChunkWork(
                    context=self._context(step.plan_location),
                    files=self._chunk_files(step.plan_location, step.chunk_index),
                    plan_location=step.plan_location,
                    chunk_index=step.chunk_index,
                    request=step.request,
                    outcome_uri=chunk_outcome_uri(step.plan_location, step.chunk_index),
                    checkpoint=checkpoint,
                    heartbeat=self._heartbeat,
                    is_cancelled=activity.is_cancelled,
                    report=report,
                    observer=metrics.request_latency,
                )
            )
        metrics.chunk_duration(time.monotonic() - started)
        return ChunkResult(
            chunk_index=step.chunk_index,
            counts=outcome.checkpoint.counts,
            failures_total=len(outcome.failures),
            failure_sample=outcome.failures[:FAILURE_SAMPLE_SIZE],
            delete_requests=stats.requests,
            throttled_requests=stats.throttled,
        )

    def forget(self, plan_uri: str) -> None:
        """The plan is finalized: its chunk context is not needed again."""
        with self._contexts_lock:
            self._contexts.pop(plan_uri, None)

    def _progress_report(self, chunk_index: int) -> ProgressReport:
        if self._signals is None:
            return ProgressReport(1.0, None)
        return self._signals.for_chunk(chunk_index)

    def _chunk_files(self, plan_uri: str, chunk_index: int) -> list[ContentFile]:
        uri = content_chunk_uri(plan_uri, chunk_index)
        raw = self._state.read(uri)
        if raw is None:
            raise missing_state_object("chunk object", uri)
        return ContentChunk.model_validate_json(raw).files()

    def _context(self, plan_uri: str) -> ChunkContext:
        with self._contexts_lock:
            if plan_uri in self._contexts:
                self._contexts.move_to_end(plan_uri)
                return self._contexts[plan_uri]
        context = read_chunk_context(self._state, plan_uri)
        if context is None:
            raise missing_state_object("chunk context and plan object", context_uri(plan_uri))
        with self._contexts_lock:
            self._contexts[plan_uri] = context
            while len(self._contexts) > _CONTEXT_CACHE_SIZE:
                self._contexts.popitem(last=False)
        return context
