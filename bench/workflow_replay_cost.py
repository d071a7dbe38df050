"""CPU a worker spends on a small purge's workflow tasks: the recorded express-lane history
replayed many times in the sandbox, as the worker runs it. `--pass-through` also passes the
workflow modules through the sandbox (not re-imported for every new workflow). Run it with and
without PYTHONDONTWRITEBYTECODE (and no cached bytecode) to see what compiling the modules again
for every workflow costs. `--sdk-runner` replays on the SDK's sandbox as it comes, not the
worker's (icepurge.worker.sandbox_runner, which compiles each snippet the sandbox runs once).

    .venv/bin/python -m bench.workflow_replay_cost [--count 40] [--pass-through] [--sdk-runner]
"""

from __future__ import annotations

import argparse
import asyncio
import gzip
import json
import time
from collections.abc import AsyncIterator
from pathlib import Path

from temporalio.client import WorkflowHistory
from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.worker import Replayer
from temporalio.worker.workflow_sandbox import SandboxedWorkflowRunner, SandboxRestrictions

from icepurge.connection.exit_now import run_then_exit
from icepurge.worker.sandbox_runner import CONTRACT_PACKAGE, CompiledSandboxRunner
from icepurge.workflows.namespace.purge_namespace import PurgeNamespaceWorkflow
from icepurge.workflows.table.purge_table import PurgeTableWorkflow

HISTORY = Path(__file__).parent.parent / "tests" / "histories" / "vfa1d406" / "table_purge_express.json.gz"
WORKFLOWS_PACKAGE = "icepurge.workflows"


async def _replay(count: int, pass_through: bool, sdk_runner: bool) -> str:
    saved = json.loads(gzip.decompress(HISTORY.read_bytes()))
    modules = ["pydantic", "pydantic_core", CONTRACT_PACKAGE, *([WORKFLOWS_PACKAGE] if pass_through else [])]
    restrictions = SandboxRestrictions.default.with_passthrough_modules(*modules)
    runner_class = SandboxedWorkflowRunner if sdk_runner else CompiledSandboxRunner
    runner = runner_class(restrictions=restrictions)
    replayer = Replayer(
        workflows=[PurgeTableWorkflow, PurgeNamespaceWorkflow],
        data_converter=pydantic_data_converter,
        workflow_runner=runner,
    )

    def history() -> WorkflowHistory:
        return WorkflowHistory.from_json(saved["workflow_id"], saved["history"])

    await replayer.replay_workflow(history())

    async def histories() -> AsyncIterator[WorkflowHistory]:
        for _ in range(count):
            yield history()

    cpu, wall = time.process_time(), time.perf_counter()
    await replayer.replay_workflows(histories(), raise_on_replay_failure=True)
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    mode = "workflow modules passed through" if pass_through else "workflow modules re-imported per workflow"
    mode += ", the SDK's sandbox" if sdk_runner else ", the worker's sandbox"
    return (
        f"{mode}: {count} replays, {cpu / count * 1000:.1f} ms CPU ({wall / count * 1000:.1f} ms wall) each"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--count", type=int, default=40)
    parser.add_argument("--pass-through", action="store_true")
    parser.add_argument("--sdk-runner", action="store_true")
    args = parser.parse_args()
    print(asyncio.run(_replay(args.count, args.pass_through, args.sdk_runner)))


if __name__ == "__main__":
    run_then_exit(main)
