"""Building requests for test tables and running purges to their end."""

from __future__ import annotations

from typing import Any

from pyiceberg.table import Table

from api.client import PurgeClient
from devstack.requests import request_for_table
from workflows.request import PurgeRequest
from workflows.status import PurgeReport


def request_for(table: Table, properties: dict[str, str], **options: Any) -> PurgeRequest:
    return request_for_table("tests", table, properties, "pytest", **options)


async def purge(client: PurgeClient, request: PurgeRequest) -> PurgeReport:
    purge_id = await client.start(request)
    return await client.wait(purge_id)
