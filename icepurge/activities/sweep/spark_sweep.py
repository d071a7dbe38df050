"""The location sweep on Spark: the location split at its first level (data/, metadata/, ...), one
task listing and deleting each part, checkpointing to its own object; the top level's own objects
are one more task."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from temporalio import activity

from icepurge.activities.delete.object_store import ObjectStore
from icepurge.activities.delete.spark_engine import JobWatch, SparkEngine
from icepurge.activities.settings import ActivitySettings
from icepurge.activities.sweep.target_sweep import SweepTarget, TargetSweep, split_location
from icepurge.contract.strict_model import StrictModel
from icepurge.contract.sweep_steps import SweepCheckpoint, SweepInput
from icepurge.state.state_store import StateStore
from icepurge.stores.addresses import normalize
from icepurge.stores.outcomes import DeleteTuning
from icepurge.stores.rate_budget import task_share

if TYPE_CHECKING:
    import pyarrow as pa

_ROW_SCHEMA = "task long, checkpoint string"


@dataclass(frozen=True)
class SparkSweepTask:
    """One Spark task's share of a sweep: everything it needs travels in the closure."""

    step: SweepInput
    target: SweepTarget
    key: str
    index: int
    planned: frozenset[str]
    state_location: str
    state_properties: dict[str, str]
    tuning: DeleteTuning
    requests_per_second: float | None

    def run(self) -> SweepCheckpoint:
        state = StateStore(self.state_location, self.state_properties)
        base = state.uri(*self.step.state_parts("sweep", f"spark-{self.index:04d}"))
        checkpoint = state.uri(*self.step.state_parts("sweep-tasks", f"{self.index:04d}.json"))
        saved = state.read(checkpoint)
        done = SweepCheckpoint.model_validate_json(saved) if saved else SweepCheckpoint()
        if done.prefix_index:
            return done
        sweep = TargetSweep(self.step, state, self.planned, base, lambda now: state.write(checkpoint, now))
        options = self.step.request.options
        with ObjectStore(
            self.step.request.file_io_properties, options.concurrency, self.tuning, self.requests_per_second
        ) as store:
            sweep.run(self.target, done, store, self.key)
        # Marks the task finished: a retried job returns its counts without listing again.
        done.prefix_index = 1
        state.write(checkpoint, done)
        return done


def _spark_function(
    tasks: list[SparkSweepTask],
) -> Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]]:
    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        import pyarrow as pa

        for batch in batches:
            for index in batch.column(0).to_pylist():
                done = tasks[index].run()
                yield pa.RecordBatch.from_pydict({"task": [index], "checkpoint": [done.model_dump_json()]})

    return run


class SweepTargets(StrictModel):
    """The split a Spark sweep made, kept so that a retried activity finds the same tasks."""

    targets: list[tuple[str, bool, str]]


class SparkSweep:
    def __init__(self, settings: ActivitySettings, state: StateStore, spark: SparkEngine) -> None:
        self._settings = settings
        self._state = state
        self._spark = spark

    def sweep(self, step: SweepInput, planned: frozenset[str]) -> tuple[SweepCheckpoint, int]:
        """The counts, and how many listings it took (one per task)."""
        spark = self._spark
        targets = self._targets(step)
        running = min(len(targets), spark.slots() or len(targets))
        share = task_share(step.request.options.bucket_requests_per_second, running)
        settings = self._settings
        tasks = [
            SparkSweepTask(
                step=step,
                target=SweepTarget(location, flat),
                key=key,
                index=index,
                planned=planned,
                state_location=settings.state_location,
                state_properties=settings.state_properties,
                tuning=replace(settings.tuning, check_existence=False),
                requests_per_second=share,
            )
            for index, (location, flat, key) in enumerate(targets)
        ]
        rows = spark.run_job(
            _spark_function(tasks),
            len(tasks),
            step.job_tag,
            JobWatch(activity.heartbeat, activity.is_cancelled),
            schema=_ROW_SCHEMA,
        )
        total = SweepCheckpoint()
        for row in rows:
            done = SweepCheckpoint.model_validate_json(row["checkpoint"])
            total.swept += done.swept
            total.kept_recent += done.kept_recent
            total.failed += done.failed
            for key, count in done.by_prefix.items():
                total.by_prefix[key] = total.by_prefix.get(key, 0) + count
        return total, len(tasks)

    def _targets(self, step: SweepInput) -> list[tuple[str, bool, str]]:
        uri = self._state.uri(*step.state_parts("sweep-tasks", "targets.json"))
        saved = self._state.read(uri)
        if saved:
            return SweepTargets.model_validate_json(saved).targets
        targets = [
            (target.location, target.flat, location)
            for location in map(normalize, step.prefixes)
            for target in split_location(step, location)
        ]
        self._state.write(uri, SweepTargets(targets=targets))
        return targets
