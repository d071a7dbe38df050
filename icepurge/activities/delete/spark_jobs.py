"""Tagging and cancelling a purge's Spark jobs, on a classic session or over Spark Connect.

Classic sessions tag jobs on the SparkContext (`interruptTag` does not reach jobs started by
another thread there); Connect sessions have no SparkContext and tag operations instead.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from pyspark import SparkContext
    from pyspark.sql import SparkSession


class SparkJobs(Protocol):
    def tag(self, tag: str) -> None:
        """Tags the jobs this thread starts from now on."""

    def untag(self, tag: str) -> None: ...

    def cancel(self, tag: str) -> None:
        """Cancels the tagged jobs, from any thread, killing their running tasks."""

    def slots(self) -> int | None:
        """Tasks the cluster runs at once, when the session can tell."""


class ClassicJobs:
    def __init__(self, context: SparkContext) -> None:
        self._context = context

    def tag(self, tag: str) -> None:
        self._context.addJobTag(tag)
        # Without it a cancelled task's Python worker runs on, deleting, after its job is gone.
        self._context.setInterruptOnCancel(True)

    def untag(self, tag: str) -> None:
        self._context.removeJobTag(tag)

    def cancel(self, tag: str) -> None:
        self._context.cancelJobsWithTag(tag)

    def slots(self) -> int | None:
        return self._context.defaultParallelism


class ConnectJobs:
    def __init__(self, spark: SparkSession) -> None:
        self._spark = spark

    def tag(self, tag: str) -> None:
        self._spark.addTag(tag)

    def untag(self, tag: str) -> None:
        self._spark.removeTag(tag)

    def cancel(self, tag: str) -> None:
        self._spark.interruptTag(tag)

    def slots(self) -> int | None:
        return None


def is_connect(spark: SparkSession) -> bool:
    return type(spark).__module__.startswith("pyspark.sql.connect")


def spark_jobs(spark: SparkSession) -> SparkJobs:
    return ConnectJobs(spark) if is_connect(spark) else ClassicJobs(spark.sparkContext)
