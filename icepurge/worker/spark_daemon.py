"""Spark's Python daemon (pyspark.daemon) with the purge tasks' code imported before it forks
its workers. Spark stops a Python worker after a minute idle, and a fresh one imported that code
again in the middle of a purge's first tasks: seconds on a small machine. Forked from here, it
inherits it. Importing it starts no thread, so the fork is safe (pyspark.daemon's own caveat)."""

from pyspark.daemon import manager

import icepurge.activities.delete.spark_engine  # noqa: F401

if __name__ == "__main__":
    manager()
