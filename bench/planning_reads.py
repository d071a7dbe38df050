"""What planning costs: seconds and object-store requests (HEAD, GET) of one plan of a real
PyIceberg table, append-only (one metadata file and one manifest list per commit) and
rewrite-heavy (merge-appends, copy-on-write deletes, overwrites, expired snapshots), on the
loopback store and with a store's latency added to every GET and HEAD (a proxy's delay).
`build_plan` runs as the planning activity runs it, without Temporal; the median of three.

    .venv/bin/python -m bench.planning_reads --appends 60 --latency-ms 20
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

from pyiceberg.io import load_file_io
from pyiceberg.table import Table

from bench.bench_stack import bench_stack
from icepurge.activities.plan.planner import ChunkSizing, PlanBuild, build_plan
from icepurge.connection.exit_now import run_then_exit
from icepurge.devstack.requests import request_for_table
from icepurge.devstack.rewrite_heavy_table import compared_shapes, rewrite_heavy_table
from icepurge.devstack.s3_proxy import FaultPlan, s3_proxy, through_proxy
from icepurge.devstack.stack import EmbeddedStack
from icepurge.state.state_store import StateStore

RUNS = 3
ORDER = ("append_only", "rewrite_heavy")


def _plan_once(table: Table, properties: dict[str, str], state_dir: Path, run: int) -> float:
    request = request_for_table("bench", table, properties, "bench")
    state = StateStore(f"file://{state_dir}", {})
    started = time.perf_counter()
    build_plan(
        PlanBuild(
            purge_id=f"bench-{run}",
            request=request,
            io=load_file_io(properties, table.metadata_location),
            state=state,
            plan_uri=state.uri(f"run-{run}", "plan.json"),
            sizing=ChunkSizing(),
        )
    )
    return time.perf_counter() - started


def _measure(label: str, table: Table, stack: EmbeddedStack, latency: float, state_dir: Path) -> None:
    with s3_proxy(stack.ports.s3) as (port, faults):
        faults.read_delay = faults.head_delay = latency
        properties = through_proxy(stack.s3_properties, port)
        seconds = []
        for run in range(RUNS):
            faults.requests.clear()
            seconds.append(_plan_once(table, properties, state_dir, run))
        requests = _counts(faults)
    print(
        f"{label:<14} {latency * 1000:>6.0f} ms {statistics.median(seconds):>8.2f} s"
        f" {requests.get('HEAD', 0):>6} {requests.get('GET', 0):>6}",
        flush=True,
    )


def _counts(faults: FaultPlan) -> dict[str, int]:
    with faults.lock:
        return dict(faults.requests)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--appends", type=int, default=60)
    parser.add_argument("--partitions", type=int, default=10)
    parser.add_argument("--latency-ms", type=float, default=20.0)
    args = parser.parse_args()
    with bench_stack("icepurge-bench-") as (root, stack):
        catalog = stack.catalog("bench")
        shapes = compared_shapes(args.partitions, args.appends)
        tables = {label: rewrite_heavy_table(catalog, ("bench",), label, shapes[label]) for label in ORDER}
        for label, table in tables.items():
            metadata_files = len(table.metadata.metadata_log) + 1
            print(f"{label}: {metadata_files} metadata files, {len(table.snapshots())} snapshots")
        print(f"{'table':<14} {'latency':>9} {'planning':>10} {'HEADs':>6} {'GETs':>6}   (per plan)")
        for latency in (0.0, args.latency_ms / 1000):
            for label, table in tables.items():
                _measure(label, table, stack, latency, root / "state")


if __name__ == "__main__":
    run_then_exit(main)
