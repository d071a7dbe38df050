"""Starts and stops the embedded services together; used by `make run`, tests and benchmarks."""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass, field
from pathlib import Path

from pyiceberg.catalog.sql import SqlCatalog

from api.client import PurgeClient
from devstack.ports import StackPorts
from devstack.process import ServiceProcess
from devstack.seaweed import S3Credentials, create_buckets, s3_properties, seaweed_server
from devstack.temporal_server import temporal_server
from worker.connect import connect
from worker.settings import TemporalSettings

WAREHOUSE_BUCKET = "warehouse"
STATE_BUCKET = "icepurge-state"


@dataclass
class EmbeddedStack:
    state_dir: Path
    ports: StackPorts
    dynamic_config: dict[str, str] = field(default_factory=dict)
    credentials: S3Credentials = field(default_factory=S3Credentials)
    _services: list[ServiceProcess] = field(default_factory=list, init=False)

    @property
    def temporal_address(self) -> str:
        return f"127.0.0.1:{self.ports.temporal}"

    @property
    def s3_properties(self) -> dict[str, str]:
        return s3_properties(self.ports, self.credentials)

    @property
    def catalog_uri(self) -> str:
        return f"sqlite:///{self.state_dir / 'catalog.sqlite'}"

    def catalog(self, name: str) -> SqlCatalog:
        """A PyIceberg SQLite catalog whose tables live under s3://warehouse/<name>."""
        return SqlCatalog(
            name, uri=self.catalog_uri, warehouse=f"s3://{WAREHOUSE_BUCKET}/{name}", **self.s3_properties
        )

    def start(self) -> None:
        self.state_dir.mkdir(parents=True, exist_ok=True)
        try:
            temporal = temporal_server(self.state_dir, self.ports, self.dynamic_config)
            seaweed = seaweed_server(self.state_dir, self.ports, self.credentials)
            for service in (temporal, seaweed):
                service.start()
                self._services.append(service)
            temporal.wait_for_port(self.ports.temporal)
            seaweed.wait_for_port(self.ports.s3)
            create_buckets(self.s3_properties, [WAREHOUSE_BUCKET, STATE_BUCKET])
        except BaseException:
            self.stop()
            raise

    def stop(self) -> None:
        for service in reversed(self._services):
            service.stop()
        self._services.clear()

    async def purge_client(self) -> PurgeClient:
        return PurgeClient(await connect(TemporalSettings(temporal_address=self.temporal_address)))

    def worker_env(self, **overrides: str) -> dict[str, str]:
        """ICEPURGE_* settings for a worker process on this stack."""
        env = {
            "ICEPURGE_TEMPORAL_ADDRESS": self.temporal_address,
            "ICEPURGE_STATE_LOCATION": f"s3://{STATE_BUCKET}/purges",
            "ICEPURGE_STATE_IO_PROPERTIES": json.dumps(self.s3_properties),
        }
        env.update(overrides)
        return env

    def api_process(self, **overrides: str) -> ServiceProcess:
        """`icepurge api` on this stack's API port."""
        env = {"ICEPURGE_TEMPORAL_ADDRESS": self.temporal_address, "ICEPURGE_API_PORT": str(self.ports.api)}
        return ServiceProcess(
            "api",
            [sys.executable, "-m", "api.cli", "api"],
            self.state_dir / "logs" / "api.log",
            env={**env, **overrides},
        )

    def worker_process(self, name: str = "worker", **overrides: str) -> ServiceProcess:
        return ServiceProcess(
            name,
            [sys.executable, "-m", "api.cli", "worker"],
            self.state_dir / "logs" / f"{name}.log",
            env=self.worker_env(**overrides),
        )
