"""Two catalogs' bulk purges sharing one worker, with Temporal's task-queue fairness off and on:
each one's tables/min over the same minute.

The real workflows on the dev server (bench.control_plane's harness), one worker process of
--slots activity slots, each batch of 32 tables holding its slot for --batch-seconds. The two
namespace purges start together, one with a window of --wide units and the other of --narrow: first
come, first served, the wide one's backlog takes the slots in proportion to its window. Fairness
(each catalog its own fairness key, as icepurge starts a namespace purge) shares them by key.
Each round runs on a dev server of its own, started with `matching.enableFairness` off, then on.

    .venv/bin/python -m bench.fairness_share [--slots 8] [--wide 256] [--narrow 16]
        [--batch-seconds 1] [--seconds 60] [--partitions 4]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import tempfile
from pathlib import Path

from temporalio.client import Client

from bench.control_plane import BATCH_SECONDS_VARIABLE, QUEUE, _settings, _worker_process
from icepurge.api.clients.temporal_namespace_client import NamespacePurgeClient, namespace_request
from icepurge.connection.connect import connect
from icepurge.connection.exit_now import run_then_exit
from icepurge.devstack.free_ports import free_ports
from icepurge.devstack.ports import StackPorts
from icepurge.devstack.temporal_server import temporal_server

# More than either purge finishes within the measured minute.
TABLES = 1_000_000


async def _done(purges: NamespacePurgeClient, purge_id: str) -> int:
    return (await purges.status(purge_id)).tables_done


async def _round(arguments: argparse.Namespace, fairness: bool) -> tuple[float, float]:
    root = Path(tempfile.mkdtemp(prefix="icepurge-fairness-"))
    (root / "logs").mkdir()
    ports = StackPorts.free()
    config = {"matching.enableFairness": "true" if fairness else "false"}
    config |= {f"matching.numTaskqueue{kind}Partitions": arguments.partitions for kind in ("Read", "Write")}
    server = temporal_server(
        root, ports, codec_endpoint=f"http://127.0.0.1:{free_ports(1)[0]}", dynamic_config=config
    )
    server.start()
    server.wait_for_port(ports.temporal)
    address = f"127.0.0.1:{ports.temporal}"
    worker = _worker_process(address, arguments.slots, root / "logs", 0)
    worker.start()
    try:
        client = await connect(_settings(address))
        await asyncio.sleep(2)
        return await _share(client, arguments)
    finally:
        worker.stop(grace=3)
        server.stop(grace=5)


async def _share(client: Client, arguments: argparse.Namespace) -> tuple[float, float]:
    purges = NamespacePurgeClient(client, QUEUE)
    ids = []
    for catalog, window in (("wide", arguments.wide), ("narrow", arguments.narrow)):
        request = namespace_request(
            catalog, ["ns", f"tables{TABLES}"], requested_by="bench", max_concurrent_tables=window
        )
        ids.append(await purges.start(request))
    # Both windows fill and the backlog forms before the minute is measured.
    await asyncio.sleep(10)
    before = [await _done(purges, purge_id) for purge_id in ids]
    await asyncio.sleep(arguments.seconds)
    after = [await _done(purges, purge_id) for purge_id in ids]
    for purge_id in ids:
        await client.get_workflow_handle(purge_id).cancel()
    per_minute = [(done - start) / arguments.seconds * 60 for start, done in zip(before, after, strict=True)]
    return per_minute[0], per_minute[1]


async def _run(arguments: argparse.Namespace) -> None:
    os.environ[BATCH_SECONDS_VARIABLE] = str(arguments.batch_seconds)
    print(
        f"{os.cpu_count()} cores; one worker process of {arguments.slots} activity slots; two catalogs' "
        f"namespace purges, windows of {arguments.wide} and {arguments.narrow} units, batches of 32 "
        f"tables each holding a slot {arguments.batch_seconds} s; tables/min over {arguments.seconds} s; "
        f"{arguments.partitions} task-queue partitions"
    )
    print("| fairness | wide catalog, tables/min | narrow catalog, tables/min | narrow / wide |")
    print("| --- | ---: | ---: | ---: |")
    for fairness in (False, True):
        wide, narrow = await _round(arguments, fairness)
        print(
            f"| {'on' if fairness else 'off'} | {wide:,.0f} | {narrow:,.0f} | {narrow / wide:.2f} |",
            flush=True,
        )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--slots", type=int, default=8)
    parser.add_argument("--wide", type=int, default=256)
    parser.add_argument("--narrow", type=int, default=16)
    parser.add_argument("--batch-seconds", type=float, default=1.0)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument(
        "--partitions", default="4", help="The task queue's read and write partitions (server default 4)."
    )
    asyncio.run(_run(parser.parse_args()))


if __name__ == "__main__":
    run_then_exit(main)
