"""Publishes the contract as JSON Schema files, for catalogs written in any language."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from icepurge.contract.catalog_request import CatalogPurgeRequest
from icepurge.contract.controls import RateBudgetChange
from icepurge.contract.events import PurgeEvent
from icepurge.contract.namespace_request import NamespacePurgeRequest
from icepurge.contract.namespace_status import NamespacePurgeReport, NamespacePurgeStatus
from icepurge.contract.request import PurgeRequest
from icepurge.contract.status import PurgeReport, PurgeStatus

CONTRACT: dict[str, type[BaseModel]] = {
    "purge-request.schema.json": PurgeRequest,
    "catalog-purge-request.schema.json": CatalogPurgeRequest,
    "purge-status.schema.json": PurgeStatus,
    "purge-report.schema.json": PurgeReport,
    "purge-event.schema.json": PurgeEvent,
    "rate-budget-change.schema.json": RateBudgetChange,
    "namespace-purge-request.schema.json": NamespacePurgeRequest,
    "namespace-purge-status.schema.json": NamespacePurgeStatus,
    "namespace-purge-report.schema.json": NamespacePurgeReport,
}


def contract_schemas() -> dict[str, dict[str, Any]]:
    return {name: model.model_json_schema(mode="validation") for name, model in CONTRACT.items()}


def render(schema: dict[str, Any]) -> str:
    return json.dumps(schema, indent=2, sort_keys=True) + "\n"


def write_schemas(directory: Path) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    for name, schema in contract_schemas().items():
        (directory / name).write_text(render(schema))


if __name__ == "__main__":
    write_schemas(Path(sys.argv[1] if len(sys.argv) > 1 else "schemas"))
