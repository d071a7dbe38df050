"""The reference pages' generated sections, from the code itself: settings from the pydantic
settings models, the HTTP API from the app's OpenAPI document, the CLI from its commands' help,
events from the event model, schemas from schemas/. Each is a function returning markdown."""

from __future__ import annotations

import json
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import typer
from pydantic import BaseModel
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined
from pydantic_settings import BaseSettings

import icepurge.api.cli.main  # noqa: F401  # registers every command
from icepurge.api.cli.groups import app as cli_app
from icepurge.api.cli.settings import CliSettings
from icepurge.api.server.app import create_app
from icepurge.api.server.settings import ApiSettings
from icepurge.contract.events import EventKind, PurgeEvent
from icepurge.worker.settings import WorkerSettings

SCHEMAS = Path(__file__).resolve().parent.parent / "schemas"
HELP_WIDTH = 100


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def _default(field: FieldInfo) -> str:
    if field.default_factory is not None:
        return f"`{json.dumps(field.default_factory(), default=str)}`"  # type: ignore[call-arg]
    if field.default is PydanticUndefined:
        return "(required)"
    if field.default is None:
        return "(unset)"
    value = field.default.value if hasattr(field.default, "value") else field.default
    return f"`{json.dumps(value, default=str)}`"


def _settings_table(model: type[BaseSettings]) -> str:
    prefix = model.model_config.get("env_prefix", "")
    rows = ["| variable | default | meaning |", "| --- | --- | --- |"]
    for name, field in model.model_fields.items():
        rows.append(f"| `{prefix}{name.upper()}` | {_default(field)} | {_cell(field.description or '')} |")
    return "\n".join(rows)


def settings() -> str:
    return "\n\n".join(
        f"## {title}\n\n{_settings_table(model)}"
        for title, model in (
            ("Worker (`icepurge worker`)", WorkerSettings),
            ("HTTP API (`icepurge api`)", ApiSettings),
            ("Command line (`icepurge`)", CliSettings),
        )
    )


def _model_table(model: type[BaseModel]) -> str:
    rows = ["| field | meaning |", "| --- | --- |"]
    for name, field in model.model_fields.items():
        rows.append(f"| `{name}` | {_cell(field.description or '')} |")
    return "\n".join(rows)


def http() -> str:
    with tempfile.TemporaryDirectory(prefix="icepurge-docs-") as state:
        spec = create_app(ApiSettings(state_location=Path(state).as_uri())).openapi()
    rows = ["| method | path | what it does |", "| --- | --- | --- |"]
    for path, operations in spec["paths"].items():
        for method, operation in operations.items():
            summary = (operation.get("description") or operation.get("summary") or "").split("\n\n")[0]
            rows.append(f"| {method.upper()} | `{path}` | {_cell(summary)} |")
    return "\n".join(rows)


def cli() -> str:
    sections: list[str] = []

    # Typer's commands are click's, from the copy of click Typer ships: walked by what they have.
    def describe(command: Any, name: str) -> None:
        context = command.context_class(
            command, info_name=name, max_content_width=HELP_WIDTH, terminal_width=HELP_WIDTH
        )
        sections.append(f"## `{name}`\n\n```\n{command.get_help(context)}\n```")
        for sub_name, sub in sorted(getattr(command, "commands", {}).items()):
            if not sub.hidden:
                describe(sub, f"{name} {sub_name}")

    describe(typer.main.get_command(cli_app), "icepurge")
    return "\n\n".join(sections)


def events() -> str:
    kinds = "\n".join(f"- `{kind.value}`" for kind in EventKind)
    return f"## Kinds\n\n{kinds}\n\n## Fields\n\n{_model_table(PurgeEvent)}"


def schemas() -> str:
    rows = ["| schema | what it describes |", "| --- | --- |"]
    for path in sorted(SCHEMAS.glob("*.json")):
        schema: dict[str, Any] = json.loads(path.read_text())
        what = schema.get("description") or schema.get("title") or ""
        rows.append(f"| [`{path.name}`](../../schemas/{path.name}) | {_cell(what.split(chr(10) * 2)[0])} |")
    return "\n".join(rows)


GENERATED: dict[str, Callable[[], str]] = {
    "settings": settings,
    "http": http,
    "cli": cli,
    "events": events,
    "schemas": schemas,
}
