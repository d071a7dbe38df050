"""Every script that loads a Temporal client ends without finalizing the interpreter.

The client's native threads can call into Python while the interpreter finalizes, and that
aborts a process whose work is done with `Fatal Python error: PyGILState_Release` and exit status
-6 (temporalio/sdk-python#300): it failed the rolling upgrade test once, in the script that starts
purges on the old release. A script that reaches `temporalio` through any module of this
repository must end through `exit_now`, `run_then_exit` or `os._exit`."""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[2]
PACKAGES = ("icepurge", "bench", "tests")
ENDINGS = ("run_then_exit(", "exit_now(", "os._exit(")
# Imports reach temporalio, but nothing in the process ever starts a client or its runtime.
NEVER_CONNECTS = {"icepurge/worker/spark_daemon.py"}


def _module_path(module: str) -> Path | None:
    base = REPOSITORY.joinpath(*module.split("."))
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


@cache
def _imported(path: Path) -> frozenset[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return frozenset(names)


def _reaches_temporalio(script: Path) -> bool:
    seen: set[Path] = set()
    waiting = [script]
    while waiting:
        path = waiting.pop()
        if path in seen:
            continue
        seen.add(path)
        for name in _imported(path):
            if name.split(".")[0] == "temporalio":
                return True
            if name.split(".")[0] in PACKAGES and (found := _module_path(name)) is not None:
                waiting.append(found)
    return False


def _scripts() -> list[Path]:
    return sorted(
        path
        for package in PACKAGES
        for path in (REPOSITORY / package).rglob("*.py")
        if 'if __name__ == "__main__":' in path.read_text()
    )


def test_every_script_holding_a_temporal_client_skips_finalization() -> None:
    scripts = [script for script in _scripts() if _reaches_temporalio(script)]
    assert len(scripts) > 30, "the import walk lost the scripts that reach temporalio"
    named = {str(script.relative_to(REPOSITORY)): script.read_text() for script in scripts}
    finalizing = [
        name
        for name, text in named.items()
        if name not in NEVER_CONNECTS and not any(ending in text for ending in ENDINGS)
    ]
    assert not finalizing, f"scripts that finalize with a Temporal client loaded: {finalizing}"
