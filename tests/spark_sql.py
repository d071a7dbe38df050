"""Spark SQL with an Iceberg runtime, as a client of a REST catalog: a session in a process of its
own (tests/spark_sql_driver.py, on an engines-tier PySpark from `make engines`), sent one
statement at a time."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from icepurge.devstack.engines_cache import engine_dir

DRIVER = Path(__file__).with_name("spark_sql_driver.py")


@dataclass(frozen=True)
class SparkRuntime:
    """A Spark and the Iceberg runtime built for it, as `make engines` installs them."""

    name: str
    iceberg_version: str

    def python(self) -> Path:
        return engine_dir(self.name) / "venv" / "bin" / "python"

    def jars(self) -> str:
        return ",".join(str(jar) for jar in sorted((engine_dir(self.name) / "jars").glob("*.jar")))


# The newest runtime served (sends purgeRequested=true with rest-catalog-purge), and the last
# that doesn't (1.10: a plain DELETE, then Spark's own deletes).
NEWEST = SparkRuntime("spark-4.1", "1.12.0")
BEFORE_PURGE_REQUESTED = SparkRuntime("spark-4.0", "1.10.2")


class SparkSqlError(RuntimeError):
    """A statement Spark refused; the message is Spark's."""


def rest_catalog_conf(name: str, uri: str, s3: dict[str, str], **extra: str) -> dict[str, str]:
    """Spark's configuration for an Iceberg REST catalog `name` at `uri`, its files on S3
    through Iceberg's S3FileIO with `s3` (PyIceberg's FileIO properties)."""
    prefix = f"spark.sql.catalog.{name}"
    settings = {
        "": "org.apache.iceberg.spark.SparkCatalog",
        ".type": "rest",
        ".uri": uri,
        ".io-impl": "org.apache.iceberg.aws.s3.S3FileIO",
        ".s3.endpoint": s3["s3.endpoint"],
        ".s3.path-style-access": "true",
        ".s3.access-key-id": s3["s3.access-key-id"],
        ".s3.secret-access-key": s3["s3.secret-access-key"],
        ".client.region": s3["s3.region"],
        **{f".{key}": value for key, value in extra.items()},
    }
    return {prefix + key: value for key, value in settings.items()}


class SparkSql:
    def __init__(self, process: subprocess.Popen[str], version: str) -> None:
        self._process = process
        self.version = version

    def sql(self, statement: str) -> list[dict[str, Any]]:
        """The statement's rows; SparkSqlError with Spark's message if it refused."""
        stdin, stdout = self._process.stdin, self._process.stdout
        assert stdin is not None and stdout is not None
        stdin.write(json.dumps({"sql": statement}) + "\n")
        stdin.flush()
        line = stdout.readline()
        if not line:
            raise SparkSqlError(f"the Spark session exited ({self._process.wait()}) on: {statement}")
        answer = json.loads(line)
        if "error" in answer:
            raise SparkSqlError(answer["error"])
        rows: list[dict[str, Any]] = answer["rows"]
        return rows


@contextmanager
def spark_sql(runtime: SparkRuntime, conf: dict[str, str], log: Path) -> Iterator[SparkSql]:
    settings = {
        "spark.jars": runtime.jars(),
        "spark.sql.extensions": "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions",
        "spark.ui.enabled": "false",
        "spark.driver.memory": "1g",
        "spark.sql.shuffle.partitions": "2",
        **conf,
    }
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("a") as errors:
        process = subprocess.Popen(
            [str(runtime.python()), str(DRIVER)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=errors,
            text=True,
        )
    try:
        assert process.stdin is not None and process.stdout is not None
        process.stdin.write(json.dumps(settings) + "\n")
        process.stdin.flush()
        ready = process.stdout.readline()
        if not ready:
            raise SparkSqlError(f"Spark did not start ({process.wait()}); see {log}")
        yield SparkSql(process, json.loads(ready)["ready"])
    finally:
        if process.stdin is not None:
            process.stdin.close()
        try:
            process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
