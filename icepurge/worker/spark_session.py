"""The worker's one warm SparkSession, built from settings alone: local[N,F], spark://,
k8s:// or Spark Connect sc://."""

from __future__ import annotations

import importlib
import os
import sys
import tempfile
import zipfile
from pathlib import Path
from typing import TYPE_CHECKING

from icepurge.activities.delete.spark_jobs import is_connect, spark_jobs
from icepurge.extras import require_extra

if TYPE_CHECKING:
    from collections.abc import Iterator

    import pyarrow as pa
    from pyspark.sql import SparkSession

# Spark redacts matching conf keys and values in its UI, event logs and logs; FileIO key names
# are added to its defaults so a credential set by an operator never shows.
REDACTION_REGEX = (
    "(?i)secret|password|token|access[.-]?key|account[.-]?key|connection[.-]?string|credential|session"
)
# What a purge task imports from this project (the activities, the contract, the stores);
# executors get it from the driver.
TASK_PACKAGES = ("icepurge",)


def build_spark_session(master: str, extra_conf: dict[str, str]) -> SparkSession:
    require_extra("The Spark engine (ICEPURGE_SPARK_MASTER)", "pyspark", "spark")
    from pyspark.sql import SparkSession

    if master.startswith("sc://"):
        # A Connect server has its own conf (FAIR, redaction, Python): see docs/operations/deployment.md.
        builder = SparkSession.builder.remote(master)
    else:
        # PySpark starts its Python workers with PYSPARK_PYTHON (not spark.pyspark.python); on
        # this host they must run this interpreter, which has the dependencies installed.
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        builder = (
            SparkSession.builder.master(master)
            .appName("icepurge-worker")
            .config("spark.scheduler.mode", "FAIR")
            .config("spark.redaction.regex", REDACTION_REGEX)
            .config("spark.pyspark.python", sys.executable)
            .config("spark.task.maxFailures", "4")
        )
        if master.startswith("local"):
            # Only this host's executors are sure to have the worker's own modules installed.
            builder = builder.config("spark.python.daemon.module", "icepurge.worker.spark_daemon")
    for key, value in extra_conf.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    if not master.startswith("local"):
        ship_project_code(spark)
    return spark


def project_archive(directory: Path) -> Path:
    """A zip of the packages purge tasks import, as this worker has them."""
    archive = directory / "icepurge-tasks.zip"
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as zipped:
        for package in TASK_PACKAGES:
            root = Path(importlib.import_module(package).__path__[0])
            for source in root.rglob("*.py"):
                zipped.write(source, f"{package}/{source.relative_to(root)}")
    return archive


def ship_project_code(spark: SparkSession) -> None:
    """Executors on other hosts import the task code from this worker, so the two never differ;
    they need the dependencies (PyIceberg, PyArrow, boto3, azure-storage-blob) installed, as the
    worker image has."""
    archive = project_archive(Path(tempfile.mkdtemp(prefix="icepurge-spark-")))
    if is_connect(spark):
        spark.addArtifacts(str(archive), pyfile=True)
    else:
        spark.sparkContext.addPyFile(str(archive))


def _import_task_modules(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    import icepurge.activities.delete.spark_engine  # noqa: F401  # what every purge task imports first
    from icepurge.stores.s3_client import load_s3_model

    load_s3_model()
    yield from batches


def warm_up(spark: SparkSession) -> None:
    """Runs one tiny job so that Spark's reused Python workers have imported PyIceberg, PyArrow
    and boto3, and loaded botocore's S3 model, before the first purge needs them (seconds on a
    small machine)."""
    slots = spark_jobs(spark).slots() or 2
    spark.range(0, slots, 1, slots).mapInArrow(_import_task_modules, "id long").collect()
