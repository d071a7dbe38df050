"""Workflow code lets the SDK's own exceptions through. Temporal evicts a cached workflow by
raising a BaseException in its coroutines, and Python closes a forgotten coroutine with
GeneratorExit: a handler that catches those and awaits (to cancel its steps) leaves a coroutine
that the garbage collector later breaks with "coroutine ignored GeneratorExit", at any moment of
any later code. It once failed CI that way, inside an unrelated import."""

from __future__ import annotations

import ast
from pathlib import Path

import icepurge

WORKFLOWS = Path(icepurge.__file__).parent / "workflows"


def _catches_everything(handler: ast.ExceptHandler) -> bool:
    caught = handler.type
    if caught is None:
        return True
    names = caught.elts if isinstance(caught, ast.Tuple) else [caught]
    return any(isinstance(name, ast.Name) and name.id in {"BaseException", "GeneratorExit"} for name in names)


def test_no_workflow_handler_catches_eviction_or_generator_exit() -> None:
    found = [
        f"{path.name}:{node.lineno}"
        for path in sorted(WORKFLOWS.rglob("*.py"))
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.ExceptHandler) and _catches_everything(node)
    ]
    assert found == [], "catch (Exception, asyncio.CancelledError) instead"
