"""The Spark engine: one Spark job per chunk, one task per group of its files.

The job is `spark.range(0, n, 1, n).mapInArrow(...)`, which runs unchanged on local[N,F],
spark://, k8s:// and Spark Connect. Each task reads its slice of the chunk object, runs the
local engine's own code over it and checkpoints to its own object, so a retried task (or a
retried activity) resumes instead of recounting; the rows the job returns are the truth.
Credentials travel in the task closure, never in Spark conf.

A task's attempt is fenced like an activity's (icepurge.state.attempt_fence): a task Spark runs
again elsewhere (its executor lost, its host cut off from the driver but not from the store)
claims the task's fence, and the first copy, still deleting, can no longer write its checkpoint,
nor one after the driver removed it. Any task of a later activity attempt outranks every task of
an earlier one.
"""

from __future__ import annotations

import contextvars
import hashlib
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import nullcontext
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from icepurge.activities.delete.chunk_deleter import ChunkOutcome, group_size
from icepurge.activities.delete.engine import ChunkWork
from icepurge.activities.delete.local_engine import FileDeletes, delete_files
from icepurge.activities.delete.spark_jobs import spark_jobs
from icepurge.activities.plan.plan_model import ContentChunk, content_chunk_uri
from icepurge.catalogs.locations import parent_dir
from icepurge.contract.counts import FileCounts
from icepurge.contract.steps import ChunkCheckpoint
from icepurge.state.attempt_fence import AttemptKey, attempt_scope, current_attempt
from icepurge.state.state_store import StateStore
from icepurge.stores.outcomes import DeleteTuning, RequestStats
from icepurge.stores.rate_budget import task_share

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark.sql import SparkSession

ROW_SCHEMA = "task long, outcome string, requests long, throttled long"
# Spark's attempts of one task within one activity attempt stay below this (spark.task.maxFailures).
TASK_ATTEMPTS_PER_ACTIVITY_ATTEMPT = 1000
POLL_SECONDS = 0.5
# How often the driver reads the tasks' checkpoints to report the chunk's progress.
PROGRESS_SECONDS = 2.0


@dataclass(frozen=True)
class TaskSpec:
    """Everything one Spark task needs, shipped in the closure (credentials included): its slice
    of the chunk object, read by the task, and the deletes to run over it."""

    chunk_uri: str
    start: int
    end: int
    state_location: str
    state_properties: dict[str, str]
    deletes: FileDeletes
    task: int = 0
    # The chunk activity's attempt that ran the job (None outside an activity).
    activity: AttemptKey | None = None

    def attempt(self, spark_attempt: int) -> AttemptKey | None:
        """This task's attempt: Spark's `spark_attempt` (from 0) within the activity's."""
        if self.activity is None:
            return None
        return AttemptKey(
            self.activity.workflow_id,
            self.activity.run_id,
            f"{self.activity.activity_id}-task-{self.task}",
            (self.activity.attempt - 1) * TASK_ATTEMPTS_PER_ACTIVITY_ATTEMPT + spark_attempt + 1,
        )


def _spark_attempt() -> int:
    from pyspark import TaskContext

    context = TaskContext.get()
    return context.attemptNumber() if context is not None else 0


def run_task(spec: TaskSpec, spark_attempt: int) -> tuple[ChunkOutcome, RequestStats]:
    key = spec.attempt(spark_attempt)
    with attempt_scope(key) if key is not None else nullcontext():
        state = StateStore(spec.state_location, spec.state_properties)
        raw = state.read(spec.chunk_uri)
        if raw is None:
            raise FileNotFoundError(f"chunk object missing: {spec.chunk_uri}")
        files = ContentChunk.model_validate_json(raw).files()[spec.start : spec.end]
        return delete_files(replace(spec.deletes, files=files), state, lambda _: None, ChunkCheckpoint())


def _task_function(specs: list[TaskSpec]) -> Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]]:
    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        import pyarrow as pa

        for batch in batches:
            for task in batch.column(0).to_pylist():
                outcome, stats = run_task(specs[task], _spark_attempt())
                yield pa.RecordBatch.from_pydict(
                    {
                        "task": [task],
                        "outcome": [outcome.model_dump_json()],
                        "requests": [stats.requests],
                        "throttled": [stats.throttled],
                    }
                )

    return run


def merge(outcomes: list[ChunkOutcome]) -> ChunkOutcome:
    merged = ChunkOutcome()
    for outcome in outcomes:
        merged.checkpoint.counts.add(outcome.checkpoint.counts)
        merged.failures.extend(outcome.failures)
        merged.would_delete.extend(outcome.would_delete)
    merged.checkpoint.failures_total = len(merged.failures)
    return merged


def chunk_job_tag(purge_id: str, plan_location: str, chunk_index: int) -> str:
    """Unique to one run chain's chunk: the plan's location names the run, so a run that is
    cancelled (its jobs by their tag) never cancels a later run's chunk under the same purge id."""
    run = hashlib.sha256(plan_location.encode()).hexdigest()[:12]
    return f"{purge_id}-{run}-chunk-{chunk_index}"


@dataclass(frozen=True)
class JobWatch:
    """What the driver does while a job runs: heartbeats, looks for the activity's cancellation,
    and reports progress (every PROGRESS_SECONDS)."""

    heartbeat: Callable[..., None]
    is_cancelled: Callable[[], bool]
    progress: Callable[[], None] | None = None


class SparkEngine:
    def __init__(
        self,
        spark: SparkSession,
        state_location: str,
        state_properties: dict[str, str],
        tuning: DeleteTuning,
    ) -> None:
        self.spark = spark
        self._jobs = spark_jobs(spark)
        self._state_location = state_location
        self._state_properties = state_properties
        self._state = StateStore(state_location, state_properties)
        self._tuning = tuning

    def run_chunk(self, work: ChunkWork) -> tuple[ChunkOutcome, RequestStats]:
        context, chunk_index, outcome_uri = work.context, work.chunk_index, work.outcome_uri
        files = len(work.files)
        chunk_uri = content_chunk_uri(work.plan_location, chunk_index)
        saved = self._state.read(outcome_uri)
        if saved:
            done = ChunkOutcome.model_validate_json(saved)
            if done.checkpoint.next_file == files:
                return done, RequestStats()
        options = work.request.options
        size = group_size(options.concurrency, self._tuning.batch_files)
        groups = [(start, min(start + size, files)) for start in range(0, files, size)]
        task_dir = f"{parent_dir(outcome_uri)}/{chunk_index:06d}-tasks"
        # Tasks beyond the cluster's slots wait for a free one, so at most this many run at once;
        # when the session can't tell its slots, every task may be running.
        slots = self._jobs.slots() or len(groups)
        running_tasks = options.chunk_window * min(len(groups), slots)
        share = task_share(options.bucket_requests_per_second, running_tasks)
        specs = [
            TaskSpec(
                chunk_uri=chunk_uri,
                start=start,
                end=end,
                state_location=self._state_location,
                state_properties=self._state_properties,
                deletes=FileDeletes(
                    files=[],
                    gc_enabled=context.gc_enabled,
                    locations=context.locations,
                    request=work.request,
                    outcome_uri=f"{task_dir}/{task:05d}.json",
                    tuning=self._tuning,
                    requests_per_second=share,
                ),
                task=task,
                activity=current_attempt(),
            )
            for task, (start, end) in enumerate(groups)
        ]
        tag = chunk_job_tag(context.purge_id, work.plan_location, chunk_index)
        rows = self.run_job(
            _task_function(specs),
            len(specs),
            tag,
            JobWatch(work.heartbeat, work.is_cancelled, lambda: work.report(self._tasks_progress(specs))),
        )
        merged = merge([ChunkOutcome.model_validate_json(row["outcome"]) for row in rows])
        merged.checkpoint.next_file = files
        self._state.write(outcome_uri, merged)
        for spec in specs:
            self._state.delete(spec.deletes.outcome_uri)
        stats = RequestStats(
            requests=sum(int(row["requests"]) for row in rows),
            throttled=sum(int(row["throttled"]) for row in rows),
        )
        return merged, stats

    def _tasks_progress(self, specs: list[TaskSpec]) -> FileCounts:
        """The chunk's counts so far, from the checkpoints the tasks write as they go."""
        counts = FileCounts()
        for spec in specs:
            saved = self._state.read(spec.deletes.outcome_uri)
            if saved:
                counts.add(ChunkOutcome.model_validate_json(saved).checkpoint.counts)
        return counts

    def slots(self) -> int | None:
        """Tasks the cluster runs at once, when the session can tell."""
        return self._jobs.slots()

    def run_job(
        self,
        function: Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]],
        count: int,
        tag: str,
        watch: JobWatch,
        schema: str = ROW_SCHEMA,
    ) -> list[Any]:
        """`count` tasks of `function` (each gets its index), one job tagged `tag`: heartbeats
        while it runs, reports progress, and is cancelled with the activity. Rows are the truth."""
        jobs = self._jobs
        finished = threading.Event()

        def watching() -> None:
            """Heartbeats and reports progress while the job runs; cancels it when the
            activity is cancelled."""
            next_report = time.monotonic() + PROGRESS_SECONDS
            while not finished.wait(POLL_SECONDS):
                watch.heartbeat()
                if watch.is_cancelled():
                    jobs.cancel(tag)
                    return
                if watch.progress is not None and time.monotonic() >= next_report:
                    watch.progress()
                    next_report = time.monotonic() + PROGRESS_SECONDS

        # The watcher needs the activity's context to heartbeat and to see cancellation.
        watcher = threading.Thread(target=contextvars.copy_context().run, args=(watching,), daemon=True)
        jobs.tag(tag)
        watcher.start()
        try:
            frame = self.spark.range(0, count, 1, count).mapInArrow(function, schema)
            return frame.collect()
        except BaseException:
            # Temporal may cancel the activity by raising inside this very call; the job
            # itself runs on in the JVM until it is cancelled by its tag.
            jobs.cancel(tag)
            raise
        finally:
            finished.set()
            jobs.untag(tag)
            watcher.join()
