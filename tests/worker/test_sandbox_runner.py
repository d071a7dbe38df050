"""The worker's sandbox compiles each snippet it runs once a process: a replay's activations and
payloads all reach the compiled snippets, and a second replay compiles nothing. Each command's
payload contexts are asked of the sandbox once between two activations, and answered as the
sandbox would answer."""

from __future__ import annotations

import gzip
import json
from collections.abc import Callable
from types import CodeType

import pytest
from temporalio.client import WorkflowHistory
from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.worker import Replayer
from temporalio.worker._command_aware_visitor import CommandInfo
from temporalio.worker.workflow_sandbox._runner import _Instance

from icepurge.worker import sandbox_runner
from icepurge.worker.sandbox_runner import _SnippetsCompiledOnce, compiled_snippet, sandboxed_runner
from icepurge.workflows.namespace.purge_namespace import PurgeNamespaceWorkflow
from icepurge.workflows.namespace.purge_table_range import PurgeTableRangeWorkflow
from icepurge.workflows.table.purge_table import PurgeTableWorkflow
from tests.paths import TESTS

# What the SDK asks a workflow instance for each payload, each a snippet run in the sandbox.
CONTEXTS = ("get_serialization_context", "get_external_store_context")
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


async def test_each_commands_contexts_are_asked_of_the_sandbox_once_between_activations(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The SDK asks a workflow for a payload's contexts three or four times a payload it encodes or
    decodes; the worker's instances run the sandbox's context snippets once a command between two
    activations, and answer each ask with what the sandbox answers for it at that moment."""
    asked: list[tuple[object, object]] = []
    context_runs = 0

    def counted_snippet(source: str) -> CodeType:
        nonlocal context_runs
        context_runs += any(f"__temporal_in_sandbox.{name}(" in source for name in CONTEXTS)
        return compiled_snippet(source)

    def checked(name: str) -> Callable[..., object]:
        worker_answer = getattr(_SnippetsCompiledOnce, name)

        def ask(instance: _Instance, command_info: CommandInfo | None) -> object:
            nonlocal context_runs
            answer = worker_answer(instance, command_info)
            runs = context_runs
            asked.append((answer, getattr(_Instance, name)(instance, command_info)))
            context_runs = runs
            return answer

        return ask

    monkeypatch.setattr(sandbox_runner, "compiled_snippet", counted_snippet)
    for name in CONTEXTS:
        monkeypatch.setattr(_SnippetsCompiledOnce, name, checked(name))
    replayer = Replayer(
        workflows=[PurgeTableWorkflow, PurgeNamespaceWorkflow, PurgeTableRangeWorkflow],
        data_converter=pydantic_data_converter,
        workflow_runner=sandboxed_runner(),
    )

    result = await replayer.replay_workflow(_history())

    assert result.replay_failure is None
    assert asked and all(answer == fresh for answer, fresh in asked), "a context answered stale"
    assert {type(answer).__name__ for answer, _ in asked} >= {
        "ActivitySerializationContext",
        "WorkflowSerializationContext",
        "StorageDriverStoreContext",
    }
    assert 0 < context_runs * 2 <= len(asked), f"{context_runs} context snippets run for {len(asked)} asks"
