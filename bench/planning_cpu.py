"""What planning costs on the tables `bench.compare_engines` purges: one plan of each shape at
each size, on the loopback store, the median of five. Most of it is decoding manifests, so this
is the figure a faster decoder moves. Run it on two trees, one after the other, to compare.

    .venv/bin/python -m bench.planning_cpu --sizes 20000
"""

from __future__ import annotations

import argparse
import statistics
import time

from pyiceberg.io import load_file_io
from pyiceberg.table import Table

from bench.bench_stack import bench_stack
from bench.bench_stores import S3BenchStore
from bench.compare_engines import table_of
from icepurge.activities.plan.planner import ChunkSizing, PlanBuild, build_plan
from icepurge.connection.exit_now import run_then_exit
from icepurge.devstack.requests import request_for_table
from icepurge.state.state_store import StateStore

RUNS = 5


def _plan_seconds(table: Table, properties: dict[str, str], state: StateStore, run: str) -> tuple[float, int]:
    request = request_for_table("bench", table, properties, "bench")
    started = time.perf_counter()
    plan = build_plan(
        PlanBuild(
            purge_id=run,
            request=request,
            io=load_file_io(properties, table.metadata_location),
            state=state,
            plan_uri=state.uri(run, "plan.json"),
            sizing=ChunkSizing(),
        )
    )
    return time.perf_counter() - started, sum(plan.content_chunks)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", type=int, nargs="*", default=[20_000])
    args = parser.parse_args()
    with bench_stack("icepurge-bench-") as (root, stack):
        store = S3BenchStore(stack)
        state = StateStore((root / "state").as_uri(), {})
        print("table                 distinct content   planning (median of 5)   runs (s)", flush=True)
        for shape in ("append_only", "rewrite_heavy"):
            for size in args.sizes:
                table, _ = table_of(store, shape, size)
                runs = [
                    _plan_seconds(table, store.properties, state, f"{shape}-{size}-{n}") for n in range(RUNS)
                ]
                seconds = [run[0] for run in runs]
                print(
                    f"{shape + ' ' + str(size):<20} {runs[0][1]:>17,}"
                    f"   {statistics.median(seconds):>8.2f} s"
                    f"               {' '.join(f'{second:.2f}' for second in seconds)}",
                    flush=True,
                )


if __name__ == "__main__":
    run_then_exit(main)
