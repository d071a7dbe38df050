"""Flink SQL with Iceberg's Flink runtime, as a client of a REST catalog: a session in a process of
its own (tests/flink_sql_driver.py, on the engines tier's PyFlink from `make engines`), sent one
statement at a time."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from icepurge.devstack.engines_cache import engine_dir
from tests.sql_sessions import SqlSession, sql_session

DRIVER = Path(__file__).with_name("flink_sql_driver.py")
FLINK = "flink-2.1"
# One writer a statement: a key written twice in one INSERT meets its first row in the same
# writer, which then writes a position delete for it.
SETTINGS = {"table.exec.resource.default-parallelism": "1", "parallelism.default": "1"}


def create_rest_catalog(name: str, uri: str, s3: dict[str, str], token: str | None = None) -> str:
    """Flink's CREATE CATALOG for an Iceberg REST catalog at `uri`, its files on S3 through
    Iceberg's S3FileIO with `s3` (PyIceberg's FileIO properties)."""
    options = {
        "type": "iceberg",
        "catalog-type": "rest",
        "uri": uri,
        "io-impl": "org.apache.iceberg.aws.s3.S3FileIO",
        "s3.endpoint": s3["s3.endpoint"],
        "s3.path-style-access": "true",
        "s3.access-key-id": s3["s3.access-key-id"],
        "s3.secret-access-key": s3["s3.secret-access-key"],
        "client.region": s3["s3.region"],
        **({"token": token} if token else {}),
    }
    listed = ", ".join(f"'{key}' = '{value}'" for key, value in options.items())
    return f"CREATE CATALOG {name} WITH ({listed})"


@contextmanager
def flink_sql(log: Path) -> Iterator[SqlSession]:
    python = engine_dir(FLINK) / "venv" / "bin" / "python"
    with sql_session(python, DRIVER, SETTINGS, log) as session:
        yield session
