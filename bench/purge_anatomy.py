"""Where a small purge's seconds go, beyond the deletes themselves: each warm purge's workflow
history cut into what ran at each instant (planning alone, planning and chunks together, chunks
alone, finalize, or no activity at all: the workflow's own tasks and the queues between them),
plus what the client adds around the history (its start call and the wait for the result).
Median over `--repeat` purges per contender (the letters of bench.compare_engines) of the same
table, in turns and restored between them, next to the raw ceiling for the same objects. Also
how long activities waited for a worker in all (their scheduled-to-started times) and how many
workflow tasks the purge took.

    .venv/bin/python -m bench.purge_anatomy --size 6000 --repeat 5
    .venv/bin/python -m bench.purge_anatomy --shape rewrite_heavy --contenders b0 b c
    .venv/bin/python -m bench.purge_anatomy --size 20000 --contenders b --repeat 3 --service-cpus 1

With --service-cpus, the store and the Temporal server run on those cores alone (bench.cpu_pinning).
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import statistics
from collections import defaultdict
from collections.abc import Iterable
from datetime import datetime

from temporalio.api.enums.v1 import EventType
from temporalio.api.history.v1 import HistoryEvent

from bench.bench_stack import bench_stack
from bench.bench_stores import S3BenchStore
from bench.compare_engines import CONTENDERS, SHAPES, Measured, Run, purges_in_turns, table_of
from bench.cpu_pinning import add_service_cpus_option, pin_services_if_asked
from icepurge.connection.connect import connect
from icepurge.connection.exit_now import run_then_exit
from icepurge.contract.names import (
    CHUNK_ACTIVITY,
    FINALIZE_ACTIVITY,
    LIVE_TABLE_GUARD_ACTIVITY,
    PLAN_ACTIVITY,
    PLAN_AND_FINISH_ACTIVITY,
)
from icepurge.devstack.stack import EmbeddedStack

_SHORT = {
    PLAN_ACTIVITY: "planning",
    LIVE_TABLE_GUARD_ACTIVITY: "live-table guard",
    CHUNK_ACTIVITY: "chunks",
    FINALIZE_ACTIVITY: "finalize",
    PLAN_AND_FINISH_ACTIVITY: "one step: planning, then guard, chunks and finalize for a plan small enough",
}
_CLOSED = (
    EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED,
    EventType.EVENT_TYPE_ACTIVITY_TASK_FAILED,
    EventType.EVENT_TYPE_ACTIVITY_TASK_TIMED_OUT,
    EventType.EVENT_TYPE_ACTIVITY_TASK_CANCELED,
)
IDLE = "no activity running (workflow tasks, queues)"
CLIENT = "client: start call and result wait, outside the history"
TOTAL = "total, as the client saw it"
WAITED = "activities waiting for a worker, summed (inside the rows above)"
TASKS = "workflow tasks (a count, not seconds)"


def segments(events: Iterable[HistoryEvent]) -> tuple[dict[str, float], float]:
    """Seconds per set of activity kinds running at once, from their scheduling to their close
    (so an activity's queue wait counts as its own), and the history's whole span."""
    spans: list[tuple[datetime, datetime, str]] = []
    scheduled: dict[int, tuple[str, datetime]] = {}
    seconds: defaultdict[str, float] = defaultdict(float)
    times: list[datetime] = []
    for event in events:
        at = event.event_time.ToDatetime()
        times.append(at)
        if event.event_type == EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED:
            seconds[TASKS] += 1
        elif event.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED:
            _, queued = scheduled[event.activity_task_started_event_attributes.scheduled_event_id]
            seconds[WAITED] += (at - queued).total_seconds()
        elif event.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
            name = event.activity_task_scheduled_event_attributes.activity_type.name
            scheduled[event.event_id] = (_SHORT.get(name, name), at)
        elif event.event_type in _CLOSED:
            attributes = next(
                getattr(event, field.name)
                for field, _ in event.ListFields()
                if field.name.endswith("_event_attributes")
            )
            name, started = scheduled[attributes.scheduled_event_id]
            spans.append((started, at, name))
    edges = sorted({times[0], times[-1], *(start for start, _, _ in spans), *(end for _, end, _ in spans)})
    for start, end in itertools.pairwise(edges):
        running = sorted({name for s, e, name in spans if s <= start and e >= end}, key=_step_order)
        seconds[" + ".join(running) or IDLE] += (end - start).total_seconds()
    return dict(seconds), (times[-1] - times[0]).total_seconds()


async def _cut(stack: EmbeddedStack, measured: Measured) -> dict[str, float]:
    client = await connect(stack.temporal_settings())
    history = await client.get_workflow_handle(measured.purge_id).fetch_history()
    seconds, span = segments(history.events)
    seconds[CLIENT] = measured.seconds - span
    seconds[TOTAL] = measured.seconds
    return seconds


def _print(label: str, ceiling: float, purges: dict[str, list[dict[str, float]]]) -> None:
    """One column per contender: the median of each segment over its purges (so a column need
    not add up to its median total)."""
    names = list(purges)
    keys = sorted({key for runs in purges.values() for run in runs for key in run}, key=_order)
    print(f"<!-- {label}; raw ceiling for the same objects: {ceiling:.2f} s -->")
    print("| segment (s, median of " + str(len(purges[names[0]])) + ") | " + " | ".join(names) + " |")
    print("| --- |" + " ---: |" * len(names))
    for key in keys:
        medians = [statistics.median(run.get(key, 0.0) for run in purges[name]) for name in names]
        print(f"| {key} | " + " | ".join(f"{value:.3f}" for value in medians) + " |")


def _step_order(name: str) -> tuple[int, str]:
    steps = list(_SHORT.values())
    return (steps.index(name) if name in steps else len(steps), name)


def _order(key: str) -> tuple[tuple[int, str], ...]:
    """Segments in the order a purge passes them, the idle time and the client's after."""
    rank = {IDLE: 90, CLIENT: 91, TOTAL: 92, WAITED: 93, TASKS: 94}.get(key)
    if rank is not None:
        return ((rank, key),)
    return tuple(_step_order(name) for name in key.split(" + "))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--size", type=int, default=6_000)
    parser.add_argument("--shape", default="append_only", choices=SHAPES)
    parser.add_argument("--contenders", nargs="*", default=["b0", "b"], choices=list(CONTENDERS))
    parser.add_argument("--repeat", type=int, default=5)
    add_service_cpus_option(parser)
    args = parser.parse_args()
    with bench_stack("icepurge-anatomy-") as (_, stack):
        pin_services_if_asked(args.service_cpus)
        store = S3BenchStore(stack)
        table, _ = table_of(store, args.shape, args.size)
        template = store.template(table.location())
        contenders = [CONTENDERS[slug] for slug in args.contenders]
        run = Run(contenders, store.properties, with_pyiceberg=False, repeat=args.repeat)
        measured = purges_in_turns(stack, store, run, table, template=template, tag="anatomy")
        purges = {
            name: [asyncio.run(_cut(stack, purge)) for purge in runs] for name, runs in measured.items()
        }
        ceiling = template.objects / store.ceiling(template.objects)
        _print(f"{args.shape}, {template.objects:,} objects", ceiling, purges)


if __name__ == "__main__":
    run_then_exit(main)
