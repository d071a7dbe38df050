"""The worker's one warm SparkSession, built from settings alone (local, spark://, k8s://)."""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterator

    import pyarrow as pa
    from pyspark.sql import SparkSession

# Spark redacts matching conf keys and values in its UI, event logs and logs; FileIO key names
# are added to its defaults so a credential set by an operator never shows.
REDACTION_REGEX = "(?i)secret|password|token|access[.-]?key|credential|session"


def build_spark_session(master: str, extra_conf: dict[str, str]) -> SparkSession:
    from pyspark.sql import SparkSession

    # PySpark starts its Python workers with PYSPARK_PYTHON (not spark.pyspark.python); they must
    # run this interpreter, which has the project and its dependencies installed.
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    builder = (
        SparkSession.builder.master(master)
        .appName("icepurge-worker")
        .config("spark.scheduler.mode", "FAIR")
        .config("spark.redaction.regex", REDACTION_REGEX)
        .config("spark.pyspark.python", sys.executable)
        .config("spark.task.maxFailures", "4")
    )
    for key, value in extra_conf.items():
        builder = builder.config(key, value)
    return builder.getOrCreate()


def _import_task_modules(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    import activities.spark_engine  # noqa: F401  # what every purge task imports first

    yield from batches


def warm_up(spark: SparkSession) -> None:
    """Runs one tiny job so that Spark's reused Python workers have imported PyIceberg, PyArrow
    and boto3 before the first purge needs them (seconds on a small machine)."""
    slots = spark.sparkContext.defaultParallelism
    spark.range(0, slots, 1, slots).mapInArrow(_import_task_modules, "id long").collect()
