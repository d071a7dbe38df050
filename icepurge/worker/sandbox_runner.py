"""The workflow sandbox icepurge's workflows run in: the SDK's, with pydantic and the contract
passed through, and each snippet of source the sandbox runs compiled once a process.

The compiling rides on temporalio 1.35's private `_Instance._run_code` (uv.lock holds that
version): tests/worker/test_sandbox_runner.py fails if an upgrade stops it being called."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from types import CodeType
from typing import Any

from temporalio.bridge.proto.workflow_activation import WorkflowActivation
from temporalio.bridge.proto.workflow_completion import WorkflowActivationCompletion
from temporalio.converter import SerializationContext
from temporalio.converter._extstore import StorageDriverStoreContext
from temporalio.worker import WorkflowInstance, WorkflowInstanceDetails, WorkflowRunner
from temporalio.worker._command_aware_visitor import CommandInfo
from temporalio.worker.workflow_sandbox import SandboxedWorkflowRunner, SandboxRestrictions
from temporalio.worker.workflow_sandbox._runner import _Instance

from icepurge import contract

# The contract (icepurge.contract and everything under it): pydantic models and names only,
# deterministic, no state. Imported once per process instead of once per workflow run: rebuilding
# their models took a fifth of the worker's CPU in a namespace purge of small tables (py-spy,
# bench.namespace_purge).
CONTRACT_PACKAGE = contract.__name__
# Temporal's tracing interceptor runs inside the sandbox when tracing is on: its spans are the
# process's own, not a workflow's state.
OPENTELEMETRY_PACKAGE = "opentelemetry"
# The sandbox's snippets are a handful of fixed strings and two a workflow class (its imports);
# the bound only keeps a process from holding them without end were that ever to change.
SNIPPETS_KEPT = 256
# The two contexts the SDK asks of a workflow for each payload it encodes or decodes.
SERIALIZATION = "serialization"
EXTERNAL_STORE = "external store"


@lru_cache(maxsize=SNIPPETS_KEPT)
def compiled_snippet(source: str) -> CodeType:
    """`exec` compiles a string each call; a code object, compiled with the same name, it runs as
    it is."""
    return compile(source, "<string>", "exec")


class _SnippetsCompiledOnce(_Instance):
    """The SDK's sandboxed workflow instance, its snippets compiled once, and each command's payload
    contexts learnt once between two activations.

    temporalio 1.35 `exec`s a source string for every activation and, three times, for every payload
    it encodes or decodes to learn its serialization context (a fourth, encoding, for its external
    store context). Compiling them was two thirds of that, 18 % of a control plane worker's Python CPU
    (bench/results/control_plane_worker_profile.txt). Between two activations nothing changes the
    workflow's pending commands, which is all a context is made of, so each command's contexts are
    asked of the sandbox once there, not once for every payload: most of a namespace purge's first
    window of batches went into asking them again (an input and a summary each)."""

    def __init__(
        self,
        instance_details: WorkflowInstanceDetails,
        runner_class: type[WorkflowRunner],
        restrictions: SandboxRestrictions,
    ) -> None:
        self._contexts: dict[tuple[str, CommandInfo | None], Any] = {}
        super().__init__(instance_details, runner_class, restrictions)

    def _run_code(self, code: str, **extra_globals: Any) -> None:
        # The SDK passes its argument straight to `exec`, which takes a code object as well.
        super()._run_code(compiled_snippet(code), **extra_globals)  # type: ignore[arg-type]

    def activate(self, act: WorkflowActivation) -> WorkflowActivationCompletion:
        # An activation moves the pending commands: what was learnt before it no longer holds, and
        # nothing is kept from its middle.
        self._contexts.clear()
        try:
            return super().activate(act)
        finally:
            self._contexts.clear()

    def get_serialization_context(self, command_info: CommandInfo | None) -> SerializationContext | None:
        context: SerializationContext | None = self._learnt(
            SERIALIZATION, command_info, super().get_serialization_context
        )
        return context

    def get_external_store_context(self, command_info: CommandInfo | None) -> StorageDriverStoreContext:
        context: StorageDriverStoreContext = self._learnt(
            EXTERNAL_STORE, command_info, super().get_external_store_context
        )
        return context

    def _learnt(
        self, kind: str, command_info: CommandInfo | None, ask: Callable[[CommandInfo | None], Any]
    ) -> Any:
        key = (kind, command_info)
        if key not in self._contexts:
            self._contexts[key] = ask(command_info)
        return self._contexts[key]


@dataclass(frozen=True)
class CompiledSandboxRunner(SandboxedWorkflowRunner):
    """The SDK's sandbox, its restrictions and runner class unchanged, on instances that compile each
    snippet once."""

    def create_instance(self, det: WorkflowInstanceDetails) -> WorkflowInstance:
        return _SnippetsCompiledOnce(det, self.runner_class, self.restrictions)


def sandboxed_runner() -> SandboxedWorkflowRunner:
    """The workflow sandbox with pydantic and the contract passed through."""
    return CompiledSandboxRunner(
        restrictions=SandboxRestrictions.default.with_passthrough_modules(
            "pydantic", "pydantic_core", CONTRACT_PACKAGE, OPENTELEMETRY_PACKAGE
        )
    )
