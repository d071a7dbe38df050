"""Reading a Prometheus /metrics endpoint in tests."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path

_METRIC = re.compile(r"\b(?:icepurge|temporal)_[a-z_]+")


async def scrape(port: int) -> dict[str, float]:
    """Prometheus text as {'name{labels}': value}."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(b"GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
    await writer.drain()
    text = (await reader.read()).decode()
    writer.close()
    samples: dict[str, float] = {}
    for line in text.split("\r\n\r\n", 1)[-1].splitlines():
        if line and not line.startswith("#"):
            name, _, value = line.rpartition(" ")
            samples[name] = float(value)
    return samples


def metric_sum(samples: dict[str, float], prefix: str, *labels: str) -> float:
    return sum(
        value
        for name, value in samples.items()
        if name.startswith(prefix) and all(label in name for label in labels)
    )


def exported(samples: dict[str, float]) -> set[str]:
    """The metric names a scrape holds (a histogram's as `_bucket`, `_sum` and `_count`)."""
    return {name.partition("{")[0] for name in samples}


def dashboard_metrics(dashboard: Path) -> set[str]:
    """Every icepurge and Temporal SDK metric a Grafana dashboard's panels ask for."""
    panels = json.loads(dashboard.read_text())["panels"]
    expressions = [target["expr"] for panel in panels for target in panel["targets"]]
    return {name for expression in expressions for name in _METRIC.findall(expression)}
