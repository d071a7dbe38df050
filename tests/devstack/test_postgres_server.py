"""The PostgreSQL server the tests' catalogs run on (icepurge.devstack.postgres), a subprocess of
the test: it stops at once, whoever still holds a connection."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from sqlalchemy import create_engine, text

from icepurge.devstack.free_ports import free_ports
from icepurge.devstack.postgres import PostgresServer


def test_the_server_stops_at_once_while_a_pool_holds_its_connections() -> None:
    """A smart shutdown (SIGTERM) waits for every client to hang up, and a catalog's pooled
    connection never does: each stop took its 10 s grace and ended in SIGKILL."""
    postgres = PostgresServer(Path(tempfile.mkdtemp(prefix="icepurge-postgres-stop-")), free_ports(1)[0])
    postgres.start()
    try:
        pool = create_engine(postgres.sqlalchemy_uri)
        with pool.connect() as connection:
            assert connection.execute(text("SELECT 1")).scalar_one() == 1
        postgres.stop()
        log = (postgres.data_dir / "postgres.log").read_text()
        assert "received fast shutdown request" in log
        assert "database system is shut down" in log
        pool.dispose()
    finally:
        postgres.stop()
        shutil.rmtree(postgres.data_dir, ignore_errors=True)
