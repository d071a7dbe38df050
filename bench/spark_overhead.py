"""Warm Spark overhead per chunk: the wall time of a chunk-shaped Spark job
(`spark.range(0, n, 1, n).mapInArrow(...)`, one task per manifest group, tagged like a purge's
job) whose tasks do no storage work, on the worker's warm session. Whatever a chunk's job takes
beyond its tasks' own work is at most this.

    .venv/bin/python -m bench.spark_overhead [--master 'local[2,4]'] [--jobs 30]
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Iterator

import pyarrow as pa

from icepurge.activities.delete.spark_engine import ROW_SCHEMA
from icepurge.activities.delete.spark_jobs import spark_jobs
from icepurge.connection.exit_now import run_then_exit
from icepurge.worker.spark_session import build_spark_session, warm_up


def _empty_tasks(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    import icepurge.activities.delete.spark_engine  # noqa: F401  # as a purge task does

    for batch in batches:
        for task in batch.column(0).to_pylist():
            yield pa.RecordBatch.from_pydict(
                {"task": [task], "outcome": ["{}"], "requests": [0], "throttled": [0]}
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--master", default="local[2,4]")
    parser.add_argument("--jobs", type=int, default=30)
    parser.add_argument("--tasks", type=int, nargs="+", default=[1, 2, 8])
    args = parser.parse_args()
    started = time.perf_counter()
    spark = build_spark_session(args.master, {"spark.ui.enabled": "false"})
    warm_up(spark)
    print(f"session start + warm-up: {time.perf_counter() - started:.1f} s ({args.master})")
    jobs = spark_jobs(spark)
    for tasks in args.tasks:
        seconds = []
        for job in range(args.jobs):
            tag = f"overhead-{tasks}-{job}"
            jobs.tag(tag)
            begun = time.perf_counter()
            spark.range(0, tasks, 1, tasks).mapInArrow(_empty_tasks, ROW_SCHEMA).collect()
            seconds.append(time.perf_counter() - begun)
            jobs.untag(tag)
        quantiles = statistics.quantiles(seconds, n=20)
        print(
            f"{tasks} task(s) per chunk: median {statistics.median(seconds):.3f} s,"
            f" p95 {quantiles[-1]:.3f} s, max {max(seconds):.3f} s over {args.jobs} jobs"
        )
    spark.stop()


if __name__ == "__main__":
    run_then_exit(main)
