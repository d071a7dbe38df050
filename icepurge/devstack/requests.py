"""Purge requests for tables the dev stack made (demo, tests, benchmarks)."""

from __future__ import annotations

from typing import Any

from pyiceberg.table import Table

from icepurge.contract.request import PurgeOptions, PurgeRequest


def request_for_table(
    catalog: str, table: Table, properties: dict[str, str], requested_by: str, **options: Any
) -> PurgeRequest:
    *namespace, name = table.name()
    return PurgeRequest(
        catalog=catalog,
        namespace=namespace,
        table=name,
        metadata_location=table.metadata_location,
        file_io_properties=properties,
        requested_by=requested_by,
        options=PurgeOptions.model_validate(options),
    )
