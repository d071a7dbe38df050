"""The packages' import rules (docs/reference/layout.md): what each part of icepurge may
import. A change that makes the contract import a workflow, or a client import the server, fails
here."""

from __future__ import annotations

import ast
from pathlib import Path

import icepurge

ALLOWED: dict[str, set[str]] = {
    "contract": set(),
    "extras": set(),
    "stores": {"contract", "extras"},
    "workflows": {"contract"},
    "catalogs": {"contract", "stores", "extras"},
    "state": {"contract", "stores"},
    "activities": {"contract", "stores", "catalogs", "state", "extras"},
    "connection": {"contract"},
    "worker": {"contract", "connection", "stores", "catalogs", "state", "activities", "workflows", "extras"},
    "api.clients": {"contract"},
    "api.server": {"contract", "connection", "api.clients", "stores", "catalogs", "workflows"},
    "api.cli": {"contract", "connection", "api.clients", "api.server", "catalogs", "worker"},
    "devstack": {
        "contract",
        "connection",
        "stores",
        "catalogs",
        "state",
        "activities",
        "worker",
        "api.clients",
        "api.server",
        "extras",
    },
}
ROOT = Path(icepurge.__file__).parent


def _part(module: str) -> str | None:
    names = module.split(".")
    if names[0] != "icepurge" or len(names) < 2:
        return None
    return ".".join(names[1:3]) if names[1] == "api" and len(names) > 2 else names[1]


def _imports(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return found


def test_each_package_imports_only_what_the_layout_allows() -> None:
    wrong: list[str] = []
    sources = [path for path in ROOT.rglob("*.py") if "node_modules" not in path.parts]
    for path in sources:
        own = _part(".".join(("icepurge", *path.relative_to(ROOT).with_suffix("").parts)))
        if own is None:
            continue
        for module in _imports(path):
            other = _part(module)
            if other is not None and other != own and other not in ALLOWED[own]:
                wrong.append(f"{path.relative_to(ROOT.parent)} imports {module}")
    assert not wrong, "\n".join(sorted(wrong))


def test_every_package_has_its_rules() -> None:
    """A new package gets its line in ALLOWED (and in docs/reference/layout.md's picture) before it
    lands."""
    packages = {path.name for path in ROOT.iterdir() if (path / "__init__.py").exists()}
    api_parts = {f"api.{path.name}" for path in (ROOT / "api").iterdir() if (path / "__init__.py").exists()}
    modules = {path.stem for path in ROOT.glob("*.py")} - {"__init__"}
    assert (packages - {"api"}) | api_parts | modules == set(ALLOWED)


# The activities' rooms, each importing only those before it (and the modules at the top of
# activities/: the step definition, heartbeats, settings). The purge room composes the others.
ACTIVITY_ROOMS = ("signals", "catalog", "plan", "delete", "finalize", "sweep", "namespace", "purge")


def test_each_activities_room_imports_only_the_rooms_before_it() -> None:
    wrong: list[str] = []
    rooms = ROOT / "activities"
    assert {path.name for path in rooms.iterdir() if (path / "__init__.py").exists()} == set(ACTIVITY_ROOMS)
    for index, room in enumerate(ACTIVITY_ROOMS):
        for path in (rooms / room).rglob("*.py"):
            for module in _imports(path):
                names = module.split(".")
                if names[:2] != ["icepurge", "activities"] or len(names) < 4:
                    continue
                if names[2] != room and names[2] not in ACTIVITY_ROOMS[:index]:
                    wrong.append(f"{path.relative_to(ROOT.parent)} imports {module}")
    assert not wrong, "\n".join(sorted(wrong))
