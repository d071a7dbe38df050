"""A Spark standalone Master's own account of its workers, read from its UI."""

from __future__ import annotations

import json
import urllib.request


def alive_spark_workers(master_ui: str) -> int:
    """0 until the Master answers with its state: while it starts, its UI refuses connections,
    then for a moment answers /json/ with an HTML page (seen here once in eight starts), then
    says STANDBY before ALIVE."""
    try:
        with urllib.request.urlopen(f"{master_ui}/json/", timeout=30) as response:  # loopback or a test host
            state = json.load(response)
    except (OSError, ValueError):
        return 0
    return int(state.get("aliveworkers", 0))
