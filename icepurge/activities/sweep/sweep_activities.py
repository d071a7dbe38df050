"""The location sweep: list a table's location a page at a time and delete the objects older than
the cutoff through the same bulk path and rate budget as the planned deletes.

Each page is written to the state location before anything of it is deleted, and the checkpoint
says which page comes next: a retried attempt redoes the page it was on from that record (its
keys, its next listing token), so nothing is deleted unlisted and nothing is counted twice.
On the Spark engine the location is split at its first level (data/, metadata/, ...): one task
lists and deletes each part, checkpointing to its own object, and the top level's own objects
are one more task."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict
from temporalio import activity
from temporalio.exceptions import ApplicationError

from icepurge.activities.delete.object_store import ObjectStore
from icepurge.activities.delete.spark_engine import SparkEngine
from icepurge.activities.finalize.finalizer import PurgeReportObject
from icepurge.activities.settings import ActivitySettings
from icepurge.activities.signals.attempt_reports import reporting_failed_attempts
from icepurge.activities.signals.progress_signals import ProgressSignals
from icepurge.activities.step_definition import implements
from icepurge.contract.activity_steps import SWEEP
from icepurge.contract.names import SWEEP_ACTIVITY
from icepurge.contract.request import Engine
from icepurge.contract.sweep_steps import SweepCheckpoint, SweepInput, SweepResult
from icepurge.state.state_store import StateStore
from icepurge.stores.addresses import normalize
from icepurge.stores.outcomes import DeleteTuning
from icepurge.stores.rate_budget import task_share
from icepurge.stores.registry import open_store
from icepurge.stores.store import Store, StoreContext

if TYPE_CHECKING:
    import pyarrow as pa

_PAGE_KEYS = 1000
# Listings give whole seconds: an object stamped 12:00:00 may be from 12:00:00.9, after a cutoff
# of 12:00:00.5. Counting it a second younger keeps it.
_CLOCK_RESOLUTION = timedelta(seconds=1)
_ROW_SCHEMA = "task long, checkpoint string"


class SweepPage(BaseModel):
    """One listed page: the objects to sweep, what the listing said comes next."""

    model_config = ConfigDict(extra="forbid")

    objects: list[str]
    kept_recent: int
    next_token: str | None


@dataclass(frozen=True)
class SweepTarget:
    """A part of a location to list: everything under it, or (flat) only its own level."""

    location: str
    flat: bool = False


def _split(step: SweepInput, location: str) -> list[SweepTarget]:
    """The location's first level: its own objects, and one target per folder under it."""
    store = open_store(location, StoreContext(step.request.file_io_properties, connections=4))
    folders: list[str] = []
    token: str | None = None
    while True:
        page = store.list_page(location, token, _PAGE_KEYS, flat=True)
        folders += page.folders
        token = page.next_token
        if token is None:
            break
    return [SweepTarget(location, flat=True), *(SweepTarget(folder) for folder in folders)]


@dataclass(frozen=True)
class TargetSweep:
    """Sweeps one target, page by page; `save` keeps its checkpoint (a heartbeat, or an object
    when no activity is around to heartbeat)."""

    step: SweepInput
    state: StateStore
    planned: frozenset[str]
    record: str
    save: Callable[[SweepCheckpoint], None]

    def run(self, target: SweepTarget, done: SweepCheckpoint, store: ObjectStore, key: str) -> None:
        dry_run = self.step.request.options.dry_run
        while True:
            page_uri = f"{self.record}-{done.pages:06d}.json"
            recorded = self.state.read(page_uri)
            page = (
                SweepPage.model_validate_json(recorded)
                if recorded
                else self._list(target, done, store.store_of(target.location))
            )
            if recorded is None:
                self.state.write(page_uri, page)
            swept = len(page.objects)
            if not dry_run and page.objects:
                # The checkpoint before this page, again while its deletes are in flight.
                outcome = store.delete(page.objects, alive=lambda: self.save(done))
                done.failed += len(outcome.failed)
                swept -= len(outcome.failed)
            done.swept += swept
            done.kept_recent += page.kept_recent
            done.by_prefix[key] = done.by_prefix.get(key, 0) + swept
            done.pages += 1
            done.continuation_token = page.next_token
            self.save(done)
            if page.next_token is None:
                return

    def _list(self, target: SweepTarget, done: SweepCheckpoint, store: Store) -> SweepPage:
        listed = store.list_page(target.location, done.continuation_token, _PAGE_KEYS, flat=target.flat)
        objects, recent = [], 0
        for item in listed.objects:
            # Directory markers (SeaweedFS lists them) hold nothing.
            if item.uri.endswith("/") or normalize(item.uri) in self.planned:
                continue
            if item.modified + _CLOCK_RESOLUTION <= self.step.cutoff:
                objects.append(item.uri)
            else:
                recent += 1
        return SweepPage(objects=objects, kept_recent=recent, next_token=listed.next_token)


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


class SweepTargets(BaseModel):
    """The split a Spark sweep made, kept so that a retried activity finds the same tasks."""

    model_config = ConfigDict(extra="forbid")

    targets: list[tuple[str, bool, str]]


class SweepActivities:
    def __init__(
        self,
        settings: ActivitySettings,
        spark: SparkEngine | None = None,
        signals: ProgressSignals | None = None,
    ) -> None:
        self._settings = settings
        self._spark = spark
        self._signals = signals
        self._state = StateStore(settings.state_location, settings.state_properties)

    @property
    def all(self) -> list[Callable[..., Any]]:
        return [self.sweep_location]

    @implements(SWEEP)
    def sweep_location(self, step: SweepInput) -> SweepResult:
        with reporting_failed_attempts(self._signals, SWEEP_ACTIVITY):
            planned = self._planned(step.dry_run_report)
            if step.engine is Engine.SPARK and self._spark is not None:
                done, listings = self._on_spark(self._spark, step, planned)
            else:
                done, listings = self._locally(step, planned), len(step.prefixes)
            return SweepResult(
                swept=done.swept,
                kept_recent=done.kept_recent,
                failed=done.failed,
                by_prefix=done.by_prefix,
                listing_location=self._state.uri(*step.state_parts("sweep")),
                listings=listings,
            )

    def _tuning(self) -> DeleteTuning:
        return replace(self._settings.tuning, check_existence=False)

    def _locally(self, step: SweepInput, planned: frozenset[str]) -> SweepCheckpoint:
        details = activity.info().heartbeat_details
        done = SweepCheckpoint.model_validate(details[0]) if details else SweepCheckpoint()
        options = step.request.options

        def beat(now: SweepCheckpoint) -> None:
            activity.heartbeat(now.model_dump(mode="json"))

        with ObjectStore(
            step.request.file_io_properties,
            options.concurrency,
            self._tuning(),
            options.bucket_requests_per_second,
        ) as store:
            for index in range(done.prefix_index, len(step.prefixes)):
                location = normalize(step.prefixes[index])
                record = self._state.uri(*step.state_parts("sweep", f"{index:04d}"))
                TargetSweep(step, self._state, planned, record, beat).run(
                    SweepTarget(location), done, store, location
                )
                done.prefix_index, done.continuation_token, done.pages = index + 1, None, 0
                beat(done)
        return done

    def _on_spark(
        self, spark: SparkEngine, step: SweepInput, planned: frozenset[str]
    ) -> tuple[SweepCheckpoint, int]:
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
                tuning=self._tuning(),
                requests_per_second=share,
            )
            for index, (location, flat, key) in enumerate(targets)
        ]
        rows = spark.run_job(
            _spark_function(tasks),
            len(tasks),
            step.job_tag,
            heartbeat=activity.heartbeat,
            is_cancelled=activity.is_cancelled,
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
            for target in _split(step, location)
        ]
        self._state.write(uri, SweepTargets(targets=targets))
        return targets

    def _planned(self, dry_run_report: str | None) -> frozenset[str]:
        """A dry run deleted nothing: the plan's own files are still there and are not the sweep's."""
        if dry_run_report is None:
            return frozenset()
        raw = self._state.read(dry_run_report)
        if raw is None:
            raise ApplicationError(f"the dry run's report {dry_run_report} is gone", non_retryable=True)
        return frozenset(normalize(path) for path in PurgeReportObject.model_validate_json(raw).would_delete)
