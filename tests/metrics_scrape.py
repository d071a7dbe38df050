"""Reading a Prometheus /metrics endpoint in tests."""

from __future__ import annotations

import asyncio


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
