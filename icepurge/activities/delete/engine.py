"""The seam between a chunk and the engine that deletes it: one work value in, the chunk's outcome
and request counts out. The local engine runs the deletes on the worker's threads
(local_engine.py), the Spark engine as one Spark job per chunk (spark_engine.py); both delete
with the same code (`delete_files`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from temporalio.exceptions import ApplicationError

from icepurge.activities.delete.chunk_deleter import ChunkOutcome
from icepurge.activities.delete.engine_choice import AutoSparkThresholds
from icepurge.activities.plan.plan_model import ChunkContext, ContentFile
from icepurge.activities.signals.progress_signals import ProgressReport
from icepurge.contract.names import ERROR_ENGINE_UNAVAILABLE
from icepurge.contract.request import Engine, PurgeRequest
from icepurge.contract.steps import ChunkCheckpoint
from icepurge.stores.outcomes import LatencyObserver, RequestStats


@dataclass(frozen=True)
class ChunkWork:
    """One chunk of a plan, resumed from `checkpoint`, its outcome kept at `outcome_uri`."""

    context: ChunkContext
    files: list[ContentFile]
    plan_location: str
    chunk_index: int
    request: PurgeRequest
    outcome_uri: str
    checkpoint: ChunkCheckpoint
    heartbeat: Callable[..., None]
    is_cancelled: Callable[[], bool]
    report: ProgressReport
    observer: LatencyObserver = None


class ChunkEngine(Protocol):
    def run_chunk(self, work: ChunkWork) -> tuple[ChunkOutcome, RequestStats]: ...


class ChunkEngines:
    """The engines this worker has: local always, Spark where ICEPURGE_SPARK_MASTER set one up."""

    def __init__(
        self, local: ChunkEngine, spark: ChunkEngine | None, auto_spark: AutoSparkThresholds
    ) -> None:
        self._engines: dict[Engine, ChunkEngine] = {Engine.LOCAL: local}
        if spark is not None:
            self._engines[Engine.SPARK] = spark
        self._auto_spark = auto_spark

    def engine(self, engine: Engine) -> ChunkEngine:
        found = self._engines.get(engine)
        if found is None:
            raise ApplicationError(
                "this worker has no Spark engine; set ICEPURGE_SPARK_MASTER on the workers",
                type=ERROR_ENGINE_UNAVAILABLE,
                non_retryable=True,
            )
        return found

    def choose(self, requested: Engine, content_entries: int, location: str) -> Engine:
        """On the manifest lists' entry count, known before any manifest is read: chunks
        handed out early and the plan's last ones run on one engine."""
        if requested is Engine.SPARK:
            self.engine(Engine.SPARK)
            return Engine.SPARK
        if requested is Engine.AUTO and Engine.SPARK in self._engines:
            big = self._auto_spark.picks_spark(location, content_entries)
            return Engine.SPARK if big else Engine.LOCAL
        return Engine.LOCAL
