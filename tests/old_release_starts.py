"""Run by the old release's own Python (tests/worker/test_rolling_upgrade.py): starts purges through that
release's client, as its API or CLI would, on the task queue its worker settings name. Reads what
to start as JSON on stdin and prints the purge ids as JSON. Imports icepurge only: the old one."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from typing import Any

from icepurge.api.clients.temporal_client import PurgeClient
from icepurge.api.clients.temporal_namespace_client import namespace_request
from icepurge.connection.connect import connect
from icepurge.worker.settings import WorkerSettings


async def _start(plan: dict[str, Any]) -> dict[str, str]:
    settings = WorkerSettings()
    purges = PurgeClient(await connect(settings, warn_plaintext=False), settings.task_queue)
    return {
        "big": await purges.start(plan["big"]),
        "namespace": await purges.namespaces.start(namespace_request(**plan["namespace"])),
        "soft": await purges.purge_by_name(**plan["soft"]),
    }


if __name__ == "__main__":
    print(json.dumps(asyncio.run(_start(json.loads(sys.stdin.read())))), flush=True)
    # The client's native threads can abort a finalizing interpreter (temporalio/sdk-python#300),
    # and the old release has no exit_now to skip it.
    os._exit(0)
