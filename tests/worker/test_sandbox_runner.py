"""The worker's sandbox compiles each snippet it runs once a process: a replay's activations and
payloads all reach the compiled snippets, and a second replay compiles nothing."""

from __future__ import annotations

import gzip
import json

from temporalio.client import WorkflowHistory
from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.worker import Replayer

from icepurge.worker.sandbox_runner import compiled_snippet, sandboxed_runner
from icepurge.workflows.namespace.purge_namespace import PurgeNamespaceWorkflow
from icepurge.workflows.namespace.purge_table_range import PurgeTableRangeWorkflow
from icepurge.workflows.table.purge_table import PurgeTableWorkflow
from tests.paths import TESTS

RECORDED = TESTS / "histories" / "v2bb8934" / "namespace_purge_batched.json.gz"


def _history() -> WorkflowHistory:
    saved = json.loads(gzip.decompress(RECORDED.read_bytes()))
    return WorkflowHistory.from_json(saved["workflow_id"], saved["history"])


def _calls() -> tuple[int, int]:
    info = compiled_snippet.cache_info()
    return info.hits, info.misses


async def test_a_replay_runs_every_snippet_compiled_and_a_second_compiles_none() -> None:
    history = _history()
    tasks = sum(1 for event in history.events if event.HasField("workflow_task_completed_event_attributes"))
    replayer = Replayer(
        workflows=[PurgeTableWorkflow, PurgeNamespaceWorkflow, PurgeTableRangeWorkflow],
        data_converter=pydantic_data_converter,
        workflow_runner=sandboxed_runner(),
    )
    compiled_snippet.cache_clear()

    first = await replayer.replay_workflow(history)
    hits, misses = _calls()
    second = await replayer.replay_workflow(history)
    hits_after, misses_after = _calls()

    assert first.replay_failure is None and second.replay_failure is None
    assert 0 < misses <= 8, "a few distinct snippets: the run's imports, an activation, the contexts"
    assert misses_after == misses, "the second replay compiled a snippet again"
    assert hits_after - hits >= tasks, "each activation's snippet runs compiled"
