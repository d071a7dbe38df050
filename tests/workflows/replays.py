"""A workflow history replayed on today's workflow code, as a worker would after an upgrade."""

from __future__ import annotations

from typing import Any

from temporalio.client import WorkflowHistory
from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.worker import Replayer

from icepurge.worker.sandbox_runner import sandboxed_runner
from icepurge.workflows.namespace.purge_namespace import PurgeNamespaceWorkflow
from icepurge.workflows.namespace.purge_table_range import PurgeTableRangeWorkflow
from icepurge.workflows.shared.echo import EchoWorkflow
from icepurge.workflows.table.purge_table import PurgeTableWorkflow


async def replay_failure(workflow_id: str, history: dict[str, Any]) -> Exception | None:
    """Why the history (its JSON form) fails to replay, or None. Child ids derive from the
    workflow's own id: a replay under another id would differ."""
    replayer = Replayer(
        workflows=[PurgeTableWorkflow, PurgeNamespaceWorkflow, PurgeTableRangeWorkflow, EchoWorkflow],
        data_converter=pydantic_data_converter,
        workflow_runner=sandboxed_runner(),
    )
    result = await replayer.replay_workflow(
        WorkflowHistory.from_json(workflow_id, history), raise_on_replay_failure=False
    )
    return result.replay_failure
