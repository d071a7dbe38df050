"""Building requests for test tables and running purges to their end."""

from __future__ import annotations

from typing import Any

from pyiceberg.table import Table

from api.client import PurgeClient
from workflows.request import PurgeOptions, PurgeRequest
from workflows.status import PurgeReport


def request_for(table: Table, properties: dict[str, str], **options: Any) -> PurgeRequest:
    namespace, name = list(table.name()[:-1]), table.name()[-1]
    return PurgeRequest(
        catalog="tests",
        namespace=namespace,
        table=name,
        metadata_location=table.metadata_location,
        file_io_properties=properties,
        requested_by="pytest",
        options=PurgeOptions.model_validate(options),
    )


async def purge(client: PurgeClient, request: PurgeRequest) -> PurgeReport:
    purge_id = await client.start(request)
    return await client.wait(purge_id)
