"""Starts and stops the embedded services together; used by `make run`, tests and benchmarks."""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

from pyiceberg.catalog.sql import SqlCatalog

from icepurge.api.clients.temporal_client import PurgeClient
from icepurge.connection.connect import connect
from icepurge.connection.payload_codec import new_key
from icepurge.connection.settings import TemporalSettings
from icepurge.devstack.ports import StackPorts
from icepurge.devstack.process import ServiceProcess, stop_together
from icepurge.devstack.seaweed import (
    S3Credentials,
    create_buckets,
    create_table_bucket,
    s3_properties,
    seaweed_server,
)
from icepurge.devstack.temporal_server import temporal_server

WAREHOUSE_BUCKET = "warehouse"
STATE_BUCKET = "icepurge-state"


@dataclass(frozen=True)
class StackHosts:
    """The addresses Temporal and the store listen on: loopback, or a services host's own address
    that other hosts (a test's network namespaces) reach."""

    temporal: str = "127.0.0.1"
    store: str = "127.0.0.1"


@dataclass
class EmbeddedStack:
    state_dir: Path
    ports: StackPorts
    dynamic_config: dict[str, str] = field(default_factory=dict)
    credentials: S3Credentials = field(default_factory=S3Credentials)
    # Catalogs its workers and API take snapshot purges from without knowing them ("*": any).
    snapshot_only_catalogs: tuple[str, ...] = ()
    hosts: StackHosts = field(default_factory=StackHosts)
    _services: list[ServiceProcess] = field(default_factory=list, init=False)

    @property
    def temporal_address(self) -> str:
        return f"{self.hosts.temporal}:{self.ports.temporal}"

    @property
    def s3_properties(self) -> dict[str, str]:
        return s3_properties(self.ports, self.credentials, self.hosts.store)

    @cached_property
    def codec_keys(self) -> dict[str, str]:
        """The stack's payload-codec key, made once per state dir and kept there, so a restarted
        stack still reads the histories it wrote."""
        path = self.state_dir / "codec-keys.json"
        if not path.exists():
            self.state_dir.mkdir(parents=True, exist_ok=True)
            path.touch(mode=0o600)
            path.write_text(json.dumps({"dev": new_key()}))
        keys: dict[str, str] = json.loads(path.read_text())
        return keys

    @property
    def codec_endpoint(self) -> str:
        """The API's codec server, which the Web UI calls to show payloads in clear."""
        return f"http://127.0.0.1:{self.ports.api}/codec"

    def temporal_settings(self) -> TemporalSettings:
        return TemporalSettings(temporal_address=self.temporal_address, codec_keys=self.codec_keys)

    @property
    def catalog_uri(self) -> str:
        return f"sqlite:///{self.state_dir / 'catalog.sqlite'}"

    def catalog_properties(self, name: str) -> dict[str, str]:
        """A SQLite catalog whose tables live under s3://warehouse/<name>."""
        return {
            "type": "sql",
            "uri": self.catalog_uri,
            "warehouse": f"s3://{WAREHOUSE_BUCKET}/{name}",
            **self.s3_properties,
        }

    def catalog(self, name: str) -> SqlCatalog:
        properties = self.catalog_properties(name)
        properties.pop("type")
        return SqlCatalog(name, **properties)

    def rest_catalog_properties(self, table_bucket: str) -> dict[str, str]:
        """SeaweedFS's Iceberg REST catalog for one S3 Tables table bucket (SigV4)."""
        return {
            "type": "rest",
            "uri": f"http://127.0.0.1:{self.ports.iceberg_rest}",
            "warehouse": f"s3://{table_bucket}/",
            "rest.sigv4-enabled": "true",
            "rest.signing-name": "s3tables",
            "rest.signing-region": "us-east-1",
            "client.access-key-id": self.credentials.access_key,
            "client.secret-access-key": self.credentials.secret_key,
            "client.region": "us-east-1",
            **self.s3_properties,
        }

    def create_table_bucket(self, name: str) -> None:
        create_table_bucket(self.s3_properties, name)

    def start(self) -> None:
        self.state_dir.mkdir(parents=True, exist_ok=True)
        try:
            temporal = self._temporal_server()
            seaweed = seaweed_server(self.state_dir, self.ports, self.credentials, self.hosts.store)
            for service in (temporal, seaweed):
                service.start()
                self._services.append(service)
            temporal.wait_for_port(self.ports.temporal, host=self.hosts.temporal)
            seaweed.wait_for_port(self.ports.s3, host=self.hosts.store)
            create_buckets(self.s3_properties, [WAREHOUSE_BUCKET, STATE_BUCKET])
        except BaseException:
            self.stop()
            raise

    def restart_temporal(self) -> None:
        """Stops the Temporal server and starts it again on the same database (the chaos run)."""
        old = next(service for service in self._services if service.name == "temporal")
        old.stop()
        new = self._temporal_server()
        new.start()
        self._services[self._services.index(old)] = new
        new.wait_for_port(self.ports.temporal, host=self.hosts.temporal)

    def _temporal_server(self) -> ServiceProcess:
        return temporal_server(
            self.state_dir, self.ports, self.codec_endpoint, self.dynamic_config, self.hosts.temporal
        )

    def stop(self, grace: float = 10.0, *also: ServiceProcess) -> None:
        """Stops the stack's services and `also` (its worker, its API) together."""
        stop_together([*also, *reversed(self._services)], grace)
        self._services.clear()

    async def purge_client(self) -> PurgeClient:
        return PurgeClient(await connect(self.temporal_settings()))

    def worker_env(self, **overrides: str) -> dict[str, str]:
        """ICEPURGE_* settings for a worker process on this stack."""
        env = {
            "ICEPURGE_TEMPORAL_ADDRESS": self.temporal_address,
            "ICEPURGE_STATE_LOCATION": f"s3://{STATE_BUCKET}/purges",
            "ICEPURGE_STATE_IO_PROPERTIES": json.dumps(self.s3_properties),
            "ICEPURGE_CODEC_KEYS": json.dumps(self.codec_keys),
            # One process a worker: what the tests kill, pause or cut off is the worker itself
            # (`make run` asks for one a core).
            "ICEPURGE_WORKER_PROCESSES": "1",
        }
        if self.snapshot_only_catalogs:
            env["ICEPURGE_SNAPSHOT_ONLY_CATALOGS"] = json.dumps(list(self.snapshot_only_catalogs))
        env.update(overrides)
        return env

    def api_process(self, **overrides: str) -> ServiceProcess:
        """`icepurge api` on this stack's API port."""
        ui = f"http://127.0.0.1:{self.ports.temporal_ui}"
        env = {
            **self.worker_env(),
            "ICEPURGE_API_PORT": str(self.ports.api),
            "ICEPURGE_API_CORS_ORIGINS": json.dumps([ui, ui.replace("127.0.0.1", "localhost")]),
        }
        return ServiceProcess(
            "api",
            [sys.executable, "-m", "icepurge.api.cli.main", "api"],
            self.state_dir / "logs" / "api.log",
            env={**env, **overrides},
        )

    def worker_process(self, name: str = "worker", **overrides: str) -> ServiceProcess:
        return ServiceProcess(
            name,
            [sys.executable, "-m", "icepurge.api.cli.main", "worker"],
            self.state_dir / "logs" / f"{name}.log",
            env=self.worker_env(**overrides),
        )
