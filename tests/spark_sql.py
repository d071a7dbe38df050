"""Spark SQL with an Iceberg runtime, as a client of a REST catalog: a session in a process of its
own (tests/spark_sql_driver.py, on an engines-tier PySpark from `make engines`), sent one
statement at a time."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from icepurge.devstack.engines_cache import engine_dir
from tests.sql_sessions import SqlSession, SqlSessionError, sql_session

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


# Spark's session and refusals are any engine's.
SparkSql = SqlSession
SparkSqlError = SqlSessionError


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
    with sql_session(runtime.python(), DRIVER, settings, log) as session:
        yield session
