"""What planning's checkpoints cost: state writes (and their bytes) and seconds of one plan, at
the cadence that lets a plan move on through a crash loop (every 16 manifests or 25,000 entries,
the walk every 16 reads) against the one before it (every 500 manifests or 200,000 entries, the
walk never), on the same tables in one run. The state location is the stack's S3 store; each
figure is one plan, the seconds the median of three.

    .venv/bin/python -m bench.plan_checkpoints
"""

from __future__ import annotations

import statistics
import time
from collections import Counter
from dataclasses import dataclass, replace
from typing import Any

from pydantic import BaseModel
from pyiceberg.io import load_file_io
from pyiceberg.table import Table

from bench.bench_stack import bench_stack
from icepurge.activities.plan import reach_walk
from icepurge.activities.plan.planner import ChunkSizing, PlanBuild, build_plan
from icepurge.connection.exit_now import run_then_exit
from icepurge.devstack.requests import request_for_table
from icepurge.devstack.synthetic_table import TableShape, synthetic_table
from icepurge.state.state_store import StateStore

RUNS = 3
COARSE = ChunkSizing(checkpoint_manifests=500, checkpoint_entries=200_000)
FINE = ChunkSizing()
# The walk saved every 16 reads, or (as before) never.
WALK_SAVES = {"fine": reach_walk.SAVE_READS, "coarse": 10**9}


@dataclass(frozen=True)
class Case:
    label: str
    shape: TableShape
    memory_files: int = ChunkSizing.memory_files


CASES = [
    Case("60 appends of 160 files", TableShape(manifests=60, files_per_manifest=160, snapshots=60)),
    Case(
        "400 manifests of 250 files, 40 appends",
        TableShape(manifests=400, files_per_manifest=250, snapshots=40),
    ),
    Case(
        "the same, over a 20,000-file budget",
        TableShape(manifests=400, files_per_manifest=250, snapshots=40),
        memory_files=20_000,
    ),
]


class CountingState(StateStore):
    """Counts writes by the kind of object, and their bytes as stored."""

    def __init__(self, location: str, properties: dict[str, str]) -> None:
        super().__init__(location, properties)
        self.writes: Counter[str] = Counter()
        self.bytes = 0

    def write(self, uri: str, document: BaseModel | dict[str, Any], compress: bool = False) -> None:
        super().write(uri, document, compress)
        self.writes[_kind(uri)] += 1
        raw = self.read(uri)
        self.bytes += len(raw or b"")


def _kind(uri: str) -> str:
    name = uri.rsplit("/", 2)
    if name[-2] in ("pending", "content", "spill"):
        return name[-2]
    return name[-1].removesuffix(".json")


def _plan(
    table: Table, properties: dict[str, str], state: StateStore, run: str, sizing: ChunkSizing
) -> float:
    started = time.perf_counter()
    build_plan(
        PlanBuild(
            purge_id=run,
            request=request_for_table("bench", table, properties, "bench"),
            io=load_file_io(properties, table.metadata_location),
            state=state,
            plan_uri=state.uri(run, "plan.json"),
            sizing=sizing,
        )
    )
    return time.perf_counter() - started


def main() -> None:
    with bench_stack("icepurge-bench-") as (_, stack):
        catalog = stack.catalog("bench")
        properties = stack.s3_properties
        state_location = stack.worker_env()["ICEPURGE_STATE_LOCATION"] + "/bench-plan-checkpoints"
        tables: dict[TableShape, Table] = {}
        print(f"{'table':<40} {'cadence':<7} {'writes':>6} {'KiB':>7} {'seconds':>8}   writes by object")
        for number, case in enumerate(CASES):
            if case.shape not in tables:
                tables[case.shape] = synthetic_table(catalog, ("bench", f"t{number}"), case.shape)
            table = tables[case.shape]
            for cadence, base in (("coarse", COARSE), ("fine", FINE)):
                sizing = replace(base, memory_files=case.memory_files)
                reach_walk.SAVE_READS = WALK_SAVES[cadence]
                counting = CountingState(state_location, properties)
                _plan(table, properties, counting, f"{number}-{cadence}-counted", sizing)
                plain = StateStore(state_location, properties)
                seconds = [
                    _plan(table, properties, plain, f"{number}-{cadence}-{run}", sizing)
                    for run in range(RUNS)
                ]
                kinds = ", ".join(f"{kind} {count}" for kind, count in sorted(counting.writes.items()))
                print(
                    f"{case.label:<40} {cadence:<7} {sum(counting.writes.values()):>6}"
                    f" {counting.bytes / 1024:>7.0f} {statistics.median(seconds):>8.2f}   {kinds}",
                    flush=True,
                )


if __name__ == "__main__":
    run_then_exit(main)
