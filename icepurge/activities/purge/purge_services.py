"""The services a purge runs on, built once per worker: planning, chunk deletes and finalize, over
the engines the worker has. The step activities, the express lane and a batch's tables share them."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from icepurge.activities import heartbeats
from icepurge.activities.delete.chunk_deletes import ChunkDeletes
from icepurge.activities.delete.engine import ChunkEngine, ChunkEngines
from icepurge.activities.delete.local_engine import LocalEngine
from icepurge.activities.finalize.finalizing import Finalizing
from icepurge.activities.plan.planning import Planning
from icepurge.activities.settings import ActivitySettings, StepContext
from icepurge.activities.signals.progress_signals import ProgressSignals
from icepurge.catalogs.admission import CatalogAdmission
from icepurge.state.state_store import StateStore


@dataclass(frozen=True)
class PurgeServices:
    """Built on one StepContext: a plan that planning holds in memory is held by the one state
    store the chunks and finalize read it back from."""

    planning: Planning
    chunks: ChunkDeletes
    finalizing: Finalizing

    @classmethod
    def build(
        cls,
        settings: ActivitySettings,
        spark: ChunkEngine | None = None,
        signals: ProgressSignals | None = None,
        admission: CatalogAdmission | None = None,
        heartbeat: Callable[..., None] = heartbeats.heartbeat,
    ) -> PurgeServices:
        """`admission` None: every catalog name is taken (tools that plan without a worker)."""
        context = StepContext(
            StateStore(settings.state_location, settings.state_properties), signals, heartbeat
        )
        engines = ChunkEngines(LocalEngine(context.state, settings.tuning), spark, settings.auto_spark)
        chunks = ChunkDeletes(context, engines)
        return cls(
            planning=Planning(settings, context, engines.choose, admission),
            chunks=chunks,
            finalizing=Finalizing(settings, context, chunks),
        )
