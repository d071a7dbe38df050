"""Locust users of the front door: each is a PyIceberg REST client pointed at it, which creates
tables, appends to them, then drops each with purge (the DELETE is what Locust times, named by
the table's size). One user also makes a large table (synthetic: many files, fast). Settings
come as JSON in ICEPURGE_LOAD; every drop (table, location, size, status, seconds) is appended
to the `out` file.

Run by bench.front_door_load and tests/test_front_door_load.py (`locust -f ... --headless`)."""

from __future__ import annotations

import itertools
import json
import os
import time
import uuid
from typing import Any
from urllib.parse import quote

from locust import HttpUser, constant, task
from locust.exception import StopUser
from pyiceberg.catalog.rest import RestCatalog

from icepurge.devstack.small_tables import create_demo_table
from icepurge.devstack.synthetic_table import TableShape, synthetic_table

SETTINGS: dict[str, Any] = json.loads(os.environ.get("ICEPURGE_LOAD", "{}"))
NAMESPACE = SETTINGS.get("namespace", "load")
_users = itertools.count()
_finished = itertools.count(1)


class FrontDoorUser(HttpUser):
    wait_time = constant(0)

    def on_start(self) -> None:
        self.number = next(_users)
        headers = {"Authorization": f"Bearer {SETTINGS['token']}"}
        config = self.client.get("/v1/config", headers=headers, name="config").json()
        prefix = config.get("overrides", {}).get("prefix") or config.get("defaults", {}).get("prefix")
        self.tables_path = (
            "/v1/" + (f"{quote(prefix, safe='')}/" if prefix else "") + f"namespaces/{NAMESPACE}/tables"
        )
        self.headers = headers
        self.catalog = RestCatalog(
            f"load-{self.number}",
            uri=str(self.host),
            token=SETTINGS["token"],
            warehouse=SETTINGS["warehouse"],
            **SETTINGS["s3"],
        )
        self.catalog.create_namespace_if_not_exists((NAMESPACE,))

    @task
    def create_append_drop(self) -> None:
        sizes = ["small"] * SETTINGS["tables_per_user"]
        if self.number == 0 and SETTINGS.get("large_files"):
            sizes.append("large")
        for size in sizes:
            name = f"{size}{self.number}x{uuid.uuid4().hex[:8]}"
            if size == "large":
                files = SETTINGS["large_files"]
                shape = TableShape(manifests=max(files // 500, 1), files_per_manifest=min(files, 500))
                table = synthetic_table(self.catalog, (NAMESPACE, name), shape)
                label = f"{files:,}-file table"
            else:
                table = create_demo_table(self.catalog, (NAMESPACE,), name)
                label = "small table (3 appends)"
            sent = time.time()
            began = time.perf_counter()
            with self.client.delete(
                f"{self.tables_path}/{name}",
                params={"purgeRequested": "true"},
                headers=self.headers,
                name=f"drop with purge, {label}",
                catch_response=True,
            ) as answer:
                if answer.status_code != 204:
                    answer.failure(f"{answer.status_code}: {answer.text[:200]}")
            dropped = {
                "table": name,
                "location": table.location(),
                "label": label,
                "status": answer.status_code,
                "seconds": time.perf_counter() - began,
                "sent": sent,
            }
            with open(SETTINGS["out"], "a") as out:
                out.write(json.dumps(dropped) + "\n")
        if next(_finished) == SETTINGS["users"]:
            self.environment.runner.quit()
        raise StopUser
