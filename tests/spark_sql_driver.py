"""A Spark SQL session in a process of its own, run by an engines-tier PySpark (`make engines`:
Spark with an Iceberg runtime built for it, which the project's own PySpark has none of): the
Spark configuration as the first JSON line on stdin (not in argv, where any process listing would
show its store keys), then one JSON line a statement, and one JSON line an answer on stdout
({"rows": [...]} or {"error": "..."}). It imports only PySpark."""

from __future__ import annotations

import json
import sys

from pyspark.sql import SparkSession


def _serve(session: SparkSession) -> None:
    for line in sys.stdin:
        statement = json.loads(line)["sql"]
        try:
            rows = [row.asDict(recursive=True) for row in session.sql(statement).collect()]
            answer: dict[str, object] = {"rows": rows}
        except Exception as error:  # the caller asserts on the message
            answer = {"error": f"{type(error).__name__}: {error}"}
        sys.stdout.write(json.dumps(answer, default=str) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    builder = SparkSession.builder.master("local[2]").appName("icepurge-engines")
    for key, value in json.loads(sys.stdin.readline()).items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    sys.stdout.write(json.dumps({"ready": spark.version}) + "\n")
    sys.stdout.flush()
    _serve(spark)
    spark.stop()
