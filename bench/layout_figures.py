"""The layout's figures (issue 41's before/after): modules per package, the imports among the
activities' modules and their longest chain, the largest module and function, the widest
signature, and where code branches on a catalog's class.

    .venv/bin/python -m bench.layout_figures [ROOT]   (ROOT: an icepurge folder, default this one's)
"""

from __future__ import annotations

import ast
import sys
from collections import Counter
from functools import cache
from pathlib import Path

DEFAULT_ROOT = Path(__file__).resolve().parent.parent / "icepurge"
MAX_ARGS = 5
# Where parameters are what users name (ruff's PLR0913 is ignored there, pyproject.toml).
SURFACES = ("icepurge.api.cli", "icepurge.api.clients", "icepurge.contract.validation", "icepurge.devstack")


def _module(root: Path, path: Path) -> str:
    parts = path.relative_to(root.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _package(module: str) -> str:
    names = module.split(".")
    if len(names) < 2:
        return "(top)"
    return ".".join(names[1:3]) if names[1] == "api" and len(names) > 2 else names[1]


def _imported(tree: ast.Module, module: str) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return found


def _arg_count(node: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    args = node.args
    names = [*args.posonlyargs, *args.args, *args.kwonlyargs]
    return len([arg for arg in names if arg.arg not in {"self", "cls"}])


def main(root: Path) -> None:
    sources = sorted(path for path in root.rglob("*.py") if "node_modules" not in path.parts)
    trees = {_module(root, path): (path, ast.parse(path.read_text())) for path in sources}
    per_package: Counter[str] = Counter()
    lines_per_package: Counter[str] = Counter()
    for module, (path, _) in trees.items():
        per_package[_package(module)] += 1
        lines_per_package[_package(module)] += len(path.read_text().splitlines())
    print("modules per package (lines):")
    for package in sorted(per_package):
        print(f"  {package:<14} {per_package[package]:>3}  ({lines_per_package[package]})")

    activities = {module for module in trees if _package(module) == "activities"}
    edges = {
        module: {other for other in _imported(trees[module][1], module) if other in activities} - {module}
        for module in activities
    }

    @cache
    def depth(module: str) -> int:
        return 1 + max((depth(other) for other in edges[module]), default=0)

    print(
        f"activities: {len(activities)} modules, {sum(map(len, edges.values()))} imports among them,"
        f" longest chain {max(map(depth, activities), default=0)} modules"
    )
    rooms = {module: module.split(".")[2] for module in activities if module.count(".") >= 3}
    crossing = {
        (rooms[module], rooms[other])
        for module, others in edges.items()
        for other in others
        if module in rooms and other in rooms and rooms[module] != rooms[other]
    }
    print(f"activities' rooms: {len(set(rooms.values()))}, {len(crossing)} room-to-room import pairs")

    largest = max(trees.items(), key=lambda item: len(item[1][0].read_text().splitlines()))
    print(f"largest module: {largest[0]} ({len(largest[1][0].read_text().splitlines())} lines)")
    functions = [
        (module, node)
        for module, (_, tree) in trees.items()
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
    ]
    longest = max(functions, key=lambda item: (item[1].end_lineno or 0) - item[1].lineno)
    widest = max(functions, key=lambda item: _arg_count(item[1]))
    print(
        f"longest function: {longest[0]}.{longest[1].name}"
        f" ({(longest[1].end_lineno or 0) - longest[1].lineno + 1} lines)"
    )
    print(
        f"widest signature: {widest[0]}.{widest[1].name} ({_arg_count(widest[1])} parameters);"
        f" {sum(_arg_count(node) > MAX_ARGS for _, node in functions)} functions over {MAX_ARGS}"
    )
    inner = [
        f"{module}.{node.name}"
        for module, node in functions
        if _arg_count(node) > MAX_ARGS and not module.startswith(SURFACES) and "routes" not in module
    ]
    print(f"  of them inside the service (not a command, route, client or request builder): {len(inner)}")
    class_checks = [
        module
        for module, (_, tree) in trees.items()
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "isinstance"
        and len(node.args) == 2
        and "Catalog" in ast.unparse(node.args[1])
    ]
    print(f"branches on a catalog's class: {len(class_checks)} ({', '.join(sorted(set(class_checks)))})")


if __name__ == "__main__":
    main(Path(sys.argv[1]).resolve() if len(sys.argv) > 1 else DEFAULT_ROOT)
