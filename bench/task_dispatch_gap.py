"""How long the dev server takes to hand a workflow task to a waiting worker (its schedule-to-start),
for a workflow of sequential no-op activities: started after the server sat idle, right after
another closed, and two at once. Every wait in a short purge (a batch's round trip, a namespace
purge's start and close) carries this one.

    .venv/bin/python -m bench.task_dispatch_gap [--activities 20] [--rounds 2] [--idle-seconds 6]

Two servers in one run, one after the other: the embedded stack's (icepurge.devstack.temporal_server,
its dynamic config included), and the same with the transfer queue read at Temporal's default
rate (history.transferProcessorMaxPollRPS 20), the baseline. The worker runs in this process and
polls all the while.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import uuid
from datetime import timedelta
from pathlib import Path

from temporalio import activity, workflow
from temporalio.api.enums.v1 import EventType
from temporalio.client import Client
from temporalio.worker import UnsandboxedWorkflowRunner, Worker

from icepurge.connection.exit_now import run_then_exit
from icepurge.devstack.free_ports import free_ports
from icepurge.devstack.ports import StackPorts
from icepurge.devstack.temporal_server import TRANSFER_QUEUE_READS, temporal_server

QUEUE = "bench-dispatch"
TEMPORALS_DEFAULT = {key: "20" for key in TRANSFER_QUEUE_READS}


@activity.defn
async def answer(value: int) -> int:
    return value


@workflow.defn
class SequentialSteps:
    @workflow.run
    async def run(self, steps: int) -> int:
        for step in range(steps):
            await workflow.execute_activity(answer, step, start_to_close_timeout=timedelta(seconds=10))
        return steps


async def _waits(client: Client, steps: int) -> tuple[list[float], float]:
    """Each workflow task's schedule-to-start in ms, and the workflow's seconds, from its history."""
    handle = await client.start_workflow(
        SequentialSteps.run, steps, id=f"dispatch-{uuid.uuid4().hex[:8]}", task_queue=QUEUE
    )
    await handle.result()
    events = [event async for event in handle.fetch_history_events()]
    waits: list[float] = []
    scheduled = events[0].event_time.ToDatetime()
    for event in events:
        at = event.event_time.ToDatetime()
        if event.event_type == EventType.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED:
            scheduled = at
        elif event.event_type == EventType.EVENT_TYPE_WORKFLOW_TASK_STARTED:
            waits.append((at - scheduled).total_seconds() * 1000)
    seconds = (events[-1].event_time.ToDatetime() - events[0].event_time.ToDatetime()).total_seconds()
    return waits, seconds


def _line(label: str, waits: list[float], seconds: float, steps: int) -> str:
    return (
        f"| {label} | {statistics.median(waits):.1f} | {max(waits):.1f} | {seconds:.3f} | "
        f"{seconds / steps * 1000:.1f} |"
    )


async def _scenarios(client: Client, arguments: argparse.Namespace) -> None:
    steps = arguments.activities
    for round_number in range(1, arguments.rounds + 1):
        await asyncio.sleep(arguments.idle_seconds)
        print(
            _line(
                f"round {round_number}: after {arguments.idle_seconds:g} s idle",
                *await _waits(client, steps),
                steps,
            )
        )
        print(_line(f"round {round_number}: right after it closed", *await _waits(client, steps), steps))
        print(_line(f"round {round_number}: right after that", *await _waits(client, steps), steps))
        await asyncio.sleep(arguments.idle_seconds)
        pair = await asyncio.gather(_waits(client, steps), _waits(client, steps))
        for index, (waits, seconds) in enumerate(pair, start=1):
            label = f"round {round_number}: two at once after {arguments.idle_seconds:g} s idle, #{index}"
            print(_line(label, waits, seconds, steps))


async def _on_server(arguments: argparse.Namespace, config: dict[str, str]) -> None:
    with tempfile.TemporaryDirectory(prefix="icepurge-dispatch-") as folder:
        root = Path(folder)
        (root / "logs").mkdir()
        ports = StackPorts.free()
        server = temporal_server(
            root, ports, codec_endpoint=f"http://127.0.0.1:{free_ports(1)[0]}", dynamic_config=config
        )
        server.start()
        try:
            server.wait_for_port(ports.temporal)
            client = await Client.connect(f"127.0.0.1:{ports.temporal}")
            async with Worker(
                client,
                task_queue=QUEUE,
                workflows=[SequentialSteps],
                activities=[answer],
                workflow_runner=UnsandboxedWorkflowRunner(),
            ):
                await _scenarios(client, arguments)
        finally:
            server.stop(grace=5)


async def _run(arguments: argparse.Namespace) -> None:
    print(f"{arguments.activities} sequential activities a workflow, each answering at once")
    for name, config in (("Temporal's default", TEMPORALS_DEFAULT), ("the embedded stack's", {})):
        reads = {**TRANSFER_QUEUE_READS, **config}
        print(
            f"\nTransfer queue reads: {name} ({', '.join(f'{key} {value}' for key, value in reads.items())})"
        )
        print(
            "| workflow | task schedule-to-start ms, median | slowest | workflow seconds | ms an activity |\n"
            "| --- | ---: | ---: | ---: | ---: |"
        )
        await _on_server(arguments, config)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--activities", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--idle-seconds", type=float, default=6.0)
    arguments = parser.parse_args()
    if arguments.activities < 1 or arguments.rounds < 1:
        parser.error("--activities and --rounds count: give 1 or more")
    asyncio.run(_run(arguments))


if __name__ == "__main__":
    run_then_exit(main)
