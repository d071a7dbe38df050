"""Locust users of the front door: each is a PyIceberg REST client pointed at it, which creates
tables, appends to them, then drops each with purge (the DELETE is what Locust times, named by
the table's size). One user also drops a large table made before the load (`large_table`): made
here, its minutes of pure-Python manifest writing would hold this gevent process and every
other user's answer with it. Settings come as JSON in ICEPURGE_LOAD; every drop (table,
location, size, status, seconds, when sent) is appended to the `out` file.

`DropUser` only drops: tables made before the run (ICEPURGE_LOAD's `tables`, name and location),
one at a time per user, each user `per_user_per_second` drops a second: an offered rate of drops
alone (bench.front_door_rates).

Run by bench.front_door_load, bench.front_door_rates and tests/api/server/front_door/test_front_door_load.py
(`locust -f ... --headless <user class>`)."""

from __future__ import annotations

import itertools
import json
import logging
import os
import time
import uuid
from typing import Any, NoReturn
from urllib.parse import quote

from locust import HttpUser, constant, constant_throughput, task
from locust.exception import StopUser
from pyiceberg.catalog.rest import RestCatalog

from icepurge.devstack.small_tables import create_demo_table

SETTINGS: dict[str, Any] = json.loads(os.environ.get("ICEPURGE_LOAD", "{}"))
NAMESPACE = SETTINGS.get("namespace", "load")
_users = itertools.count()
_finished = itertools.count(1)


class _DoorUser(HttpUser):
    abstract = True

    def on_start(self) -> None:
        self.number = next(_users)
        self.headers = {"Authorization": f"Bearer {SETTINGS['token']}"}
        config = self.client.get("/v1/config", headers=self.headers, name="config").json()
        prefix = config.get("overrides", {}).get("prefix") or config.get("defaults", {}).get("prefix")
        self.tables_path = (
            "/v1/" + (f"{quote(prefix, safe='')}/" if prefix else "") + f"namespaces/{NAMESPACE}/tables"
        )

    def finished(self) -> NoReturn:
        """A user that failed counts too: the run ends when every user is done, never at
        Locust's time cap."""
        if next(_finished) == SETTINGS["users"]:
            self.environment.runner.quit()
        raise StopUser

    def drop(self, name: str, location: str, label: str) -> None:
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
        timing = answer.headers.get("Server-Timing", "")
        dropped = {
            "server_seconds": float(timing.split(";dur=")[1]) / 1000 if ";dur=" in timing else None,
            "table": name,
            "location": location,
            "label": label,
            "status": answer.status_code,
            "seconds": time.perf_counter() - began,
            "sent": sent,
        }
        with open(SETTINGS["out"], "a") as out:
            out.write(json.dumps(dropped) + "\n")


class FrontDoorUser(_DoorUser):
    wait_time = constant(0)

    def on_start(self) -> None:
        super().on_start()
        self.catalog = RestCatalog(
            f"load-{self.number}",
            uri=str(self.host),
            token=SETTINGS["token"],
            warehouse=SETTINGS["warehouse"],
            **SETTINGS["s3"],
        )

    @task
    def create_append_drop(self) -> None:
        try:
            self._create_append_drop()
        except Exception:
            # Once: Locust would run a failed task again. Its drops are missing from the output.
            logging.exception("user %s failed", self.number)
        self.finished()

    def _create_append_drop(self) -> None:
        sizes = ["small"] * SETTINGS["tables_per_user"]
        if self.number == 0 and SETTINGS.get("large_table"):
            # Dropped among the small tables' drops, while the other users create and drop theirs.
            sizes.insert(1, "large")
        for size in sizes:
            if size == "large":
                large = SETTINGS["large_table"]
                name, location = large["name"], large["location"]
                label = f"{SETTINGS['large_files']:,}-file table"
            else:
                name = f"{size}{self.number}x{uuid.uuid4().hex[:8]}"
                location = create_demo_table(self.catalog, (NAMESPACE,), name).location()
                label = "small table (3 appends)"
            self.drop(name, location, label)


_to_drop = iter(SETTINGS.get("tables", []))


class DropUser(_DoorUser):
    wait_time = constant_throughput(SETTINGS.get("per_user_per_second", 1.0))

    @task
    def drop_next(self) -> None:
        # gevent switches only on I/O: taking the next table is never shared by two users.
        table = next(_to_drop, None)
        if table is None:
            self.finished()
        self.drop(table["name"], table["location"], SETTINGS["label"])
