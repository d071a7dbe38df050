"""`make run`: the embedded stack, a worker, and a demo purge a newcomer can watch; serves until
Ctrl-C, then stops everything it started."""

from __future__ import annotations

import asyncio
import os
import signal
import time
from pathlib import Path

from icepurge.api.clients.http_client import HttpPurgeClient
from icepurge.connection.exit_now import run_then_exit
from icepurge.contract.states import TERMINAL_STATES
from icepurge.devstack.catalog_env import pyiceberg_catalog_env
from icepurge.devstack.front_door_demo import DOOR_BUCKET, DOOR_CATALOG, front_door_demo, front_door_policies
from icepurge.devstack.ports import StackPorts
from icepurge.devstack.stack import EmbeddedStack
from icepurge.devstack.synthetic_table import TableShape, synthetic_table
from icepurge.devstack.temporal_server import TEMPORAL_DATABASE

DEMO_CATALOG = "demo"
# Ctrl-C's budget: services get SIGTERM together, and what still runs after this is killed
# (a killed worker loses nothing: its activities are retried from their checkpoints).
STOP_GRACE_SECONDS = 3.0


def catalog_env(stack: EmbeddedStack) -> dict[str, str]:
    return pyiceberg_catalog_env(DEMO_CATALOG, stack.catalog_properties(DEMO_CATALOG))


def run_state_dir() -> Path:
    return Path(os.environ.get("ICEPURGE_RUN_STATE_DIR", ".state/run")).resolve()


def run_ports() -> StackPorts:
    defaults = StackPorts.defaults()
    return StackPorts.from_pairs(
        temporal=int(os.environ.get("ICEPURGE_TEMPORAL_PORT", defaults.temporal)),
        temporal_ui=int(os.environ.get("ICEPURGE_UI_PORT", defaults.temporal_ui)),
        s3=int(os.environ.get("ICEPURGE_S3_PORT", defaults.s3)),
        api=int(os.environ.get("ICEPURGE_API_PORT", defaults.api)),
        base=int(os.environ.get("ICEPURGE_PORT_BASE", defaults.temporal_http)),
    )


async def _demo(stack: EmbeddedStack, api_url: str) -> None:
    catalog = stack.catalog(DEMO_CATALOG)
    name = f"events_{int(time.time())}"
    table = synthetic_table(
        catalog,
        ("demo", name),
        TableShape(manifests=20, files_per_manifest=50, snapshots=4, delete_files_per_snapshot=5),
    )
    print(f"seeded demo table {DEMO_CATALOG}.demo.{name}: {table.metadata_location}")
    async with HttpPurgeClient(api_url) as client:
        # By name: icepurge loads the table, plans, drops the catalog entry, then deletes.
        purge_id = await client.purge_by_name(DEMO_CATALOG, ["demo"], name, requested_by="make-run-demo")
        print(f"started purge {purge_id} by name through the HTTP API")
        while True:
            status = await client.status(purge_id)
            files = f"{status.files_done}/{status.files_total} files"
            print(f"  {status.state.value:<12} {files}, chunks {status.chunks_done}/{status.chunks_total}")
            if status.state in TERMINAL_STATES:
                break
            await asyncio.sleep(0.5)
    ui = f"http://127.0.0.1:{stack.ports.temporal_ui}/namespaces/default/workflows/{purge_id}"
    print(f"demo purge {status.state.value}; report: {status.report_location}")
    print(f"Web UI:  {ui}")
    print(f"CLI:     .venv/bin/icepurge purge watch {purge_id}   (through the API: no export needed)")
    print("Doctor:  .venv/bin/icepurge doctor")
    print(
        f"Status:  temporal workflow query --address {stack.temporal_address} -w {purge_id} --name status"
        f" --codec-endpoint {stack.codec_endpoint}"
    )
    print(f"HTTP:    curl {api_url}/v1/purges/{purge_id}   (OpenAPI: {api_url}/docs)")
    print(f"Metrics: curl http://127.0.0.1:{stack.ports.worker_metrics}/metrics")
    print(f"Catalog: {DEMO_CATALOG} (PyIceberg: {', '.join(sorted(catalog_env(stack)))})")


def main() -> None:
    state_dir = run_state_dir()
    stack = EmbeddedStack(state_dir=state_dir, ports=run_ports())
    stopping = False

    def stop(*_: object) -> None:
        nonlocal stopping
        stopping = True

    signal.signal(signal.SIGINT, stop)
    signal.signal(signal.SIGTERM, stop)
    warm = (state_dir / TEMPORAL_DATABASE).exists()
    print(f"starting the embedded stack in {state_dir} ...")
    starting_since = time.monotonic()
    stack.start()
    # The worker and the API know the demo catalogs by name, the PyIceberg way: a SQLite catalog,
    # and SeaweedFS's REST catalog, which the API's front door serves.
    os.environ.update(catalog_env(stack))
    stack.create_table_bucket(DOOR_BUCKET)
    os.environ.update(pyiceberg_catalog_env(DOOR_CATALOG, stack.rest_catalog_properties(DOOR_BUCKET)))
    worker = stack.worker_process(
        ICEPURGE_METRICS_ADDRESS=f"127.0.0.1:{stack.ports.worker_metrics}",
        ICEPURGE_WORKER_PROCESSES=os.environ.get("ICEPURGE_WORKER_PROCESSES", "0"),
    )
    # Without a token file, the local API runs in insecure dev mode: no token needed.
    secured = bool(os.environ.get("ICEPURGE_API_AUTH_FILE"))
    api = stack.api_process(
        ICEPURGE_FRONT_DOOR=front_door_policies(),
        **({} if secured else {"ICEPURGE_API_INSECURE_DEV": "true"}),
    )
    services = (worker, api)
    try:
        for service in services:
            service.start()
        api.wait_for_port(stack.ports.api)
        api_url = f"http://127.0.0.1:{stack.ports.api}"
        print(
            f"Temporal {stack.temporal_address}, Web UI http://127.0.0.1:{stack.ports.temporal_ui}, "
            f"S3 http://127.0.0.1:{stack.ports.s3}, API {api_url}"
            f"{'' if secured else ' (INSECURE DEV MODE: no token needed)'}; logs in {state_dir / 'logs'}"
        )
        print(f"ready in {time.monotonic() - starting_since:.1f} s")
        if warm:
            # The demo is for a newcomer's first start; a restart goes straight to serving.
            print(f"warm start: the demo purges ran on {state_dir}'s first start (remove it for a fresh one)")
        else:
            asyncio.run(_demo(stack, api_url))
            if secured:
                print("front door demo skipped: the API wants tokens (ICEPURGE_API_AUTH_FILE)")
            else:
                asyncio.run(front_door_demo(stack, api_url))
        print("serving; Ctrl-C stops everything")
        while not stopping and all(service.running() for service in services):
            time.sleep(0.5)
        for service in services:
            if not service.running():
                print(f"the {service.name} exited; see {service.log_path}")
    finally:
        print("stopping ...")
        stopping_since = time.monotonic()
        stack.stop(STOP_GRACE_SECONDS, *services)
        print(f"stopped in {time.monotonic() - stopping_since:.1f} s: the worker, the API and the stack")


if __name__ == "__main__":
    run_then_exit(main)
