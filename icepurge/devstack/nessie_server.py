"""Project Nessie's server (the Quarkus runner jar `make engines` fetches from Maven Central) with
its Iceberg REST catalog over one warehouse on the stack's S3, its version store in memory: an
upstream that never deletes a table's files, whatever the drop says (a Nessie commit history
may still reference them). It needs Java 21 or newer."""

from __future__ import annotations

import json
from pathlib import Path

from icepurge.devstack.engine_server import EngineServer
from icepurge.devstack.engines_cache import engine_dir, java25

WAREHOUSE = "warehouse"
_STORE_KEY = "nessie.catalog.secrets.store-key"  # a name, not a secret
_S3 = "nessie.catalog.service.s3.default-options"


class NessieServer(EngineServer):
    rest_path = "/iceberg"

    def __init__(self, state_dir: Path, port: int, location: str, s3_properties: dict[str, str]) -> None:
        super().__init__(state_dir, port, s3_properties)
        self.location = location

    def start(self) -> None:
        jar = engine_dir("nessie") / "nessie-server.jar"
        # Quarkus reads properties from the environment under their own names; the store key goes
        # there too, never into argv where a process listing shows it. Nessie resolves a secret
        # named by URN as one JSON value (a map under the name is not found from the environment).
        store_key = {
            "name": self.s3_properties["s3.access-key-id"],
            "secret": self.s3_properties["s3.secret-access-key"],
        }
        env = {
            "quarkus.http.host": "127.0.0.1",
            "quarkus.http.port": str(self.port),
            "quarkus.management.enabled": "false",
            "quarkus.log.console.level": "WARN",
            "nessie.catalog.default-warehouse": WAREHOUSE,
            f"nessie.catalog.warehouses.{WAREHOUSE}.location": self.location,
            f"{_S3}.endpoint": self.s3_properties["s3.endpoint"],
            f"{_S3}.path-style-access": "true",
            f"{_S3}.region": self.s3_properties["s3.region"],
            f"{_S3}.auth-type": "STATIC",
            f"{_S3}.access-key": f"urn:nessie-secret:quarkus:{_STORE_KEY}",
            _STORE_KEY: json.dumps(store_key),
        }
        self._run("nessie", [java25("Nessie"), "-Xmx512m", "-XX:+UseSerialGC", "-jar", str(jar)], env)
