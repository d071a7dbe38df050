"""A worker process that dies like kill -9 (os._exit, nothing flushed or reported) right after
one named activity has done its work and before its result reaches Temporal: the crash between
a step's side effect and its record. Run as `python -m tests.dying_worker ACTIVITY`."""

from __future__ import annotations

import asyncio
import logging
import os
import sys
from typing import Any

from temporalio import activity
from temporalio.worker import (
    ActivityInboundInterceptor,
    ExecuteActivityInput,
    Interceptor,
)

from icepurge.connection.connect import connect
from icepurge.connection.exit_now import run_then_exit
from icepurge.devstack.process import WORKER_READY, ServiceProcess
from icepurge.devstack.stack import EmbeddedStack
from icepurge.worker.run import activity_pool, build_worker
from icepurge.worker.settings import WorkerSettings

KILLED_EXIT_CODE = 137


class _DieAfter(ActivityInboundInterceptor):
    def __init__(self, next_: ActivityInboundInterceptor, activity_name: str) -> None:
        super().__init__(next_)
        self._activity_name = activity_name

    async def execute_activity(self, input: ExecuteActivityInput) -> Any:  # the SDK's name
        result = await super().execute_activity(input)
        if activity.info().activity_type == self._activity_name:
            os._exit(KILLED_EXIT_CODE)
        return result


class DieAfter(Interceptor):
    def __init__(self, activity_name: str) -> None:
        self._activity_name = activity_name

    def intercept_activity(self, next: ActivityInboundInterceptor) -> ActivityInboundInterceptor:
        return _DieAfter(next, self._activity_name)


def start_dying_worker(stack: EmbeddedStack, queue: str, activity_name: str) -> ServiceProcess:
    worker = ServiceProcess(
        f"dying-{activity_name}",
        [sys.executable, "-m", "tests.dying_worker", activity_name],
        stack.state_dir / "logs" / f"dying-{activity_name}.log",
        env=stack.worker_env(ICEPURGE_TASK_QUEUE=queue),
    )
    worker.start()
    return worker


async def died(worker: ServiceProcess) -> None:
    while worker.running():
        await asyncio.sleep(0.1)


async def _serve(activity_name: str) -> None:
    settings = WorkerSettings()
    client = await connect(settings)
    with activity_pool(settings) as pool:
        async with build_worker(client, settings, pool, interceptors=[DieAfter(activity_name)]):
            print(f"{WORKER_READY} {settings.task_queue}, dying after {activity_name}", flush=True)
            await asyncio.Event().wait()


if __name__ == "__main__":
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s %(message)s")
    run_then_exit(lambda: asyncio.run(_serve(sys.argv[1])))
