"""Namespace and whole-catalog purges over the HTTP API: the same methods, results and errors as
icepurge.api.clients.temporal_namespace_client.NamespacePurgeClient (which talks to Temporal directly)."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from icepurge.api.clients.api_transport import resource_path
from icepurge.api.clients.http_purges import HttpPurges
from icepurge.contract.namespace_request import NamespacePurgeRequest, parse_namespace_request
from icepurge.contract.namespace_status import (
    NAMESPACE_TERMINAL_STATES,
    NamespacePurgeReport,
    NamespacePurgeStatus,
    SkippedPage,
)


class HttpNamespacePurgeClient(HttpPurges[NamespacePurgeStatus, NamespacePurgeReport]):
    collection = "namespace-purges"
    status_type = NamespacePurgeStatus
    report_type = NamespacePurgeReport
    terminal_states = NAMESPACE_TERMINAL_STATES

    async def start(self, request: NamespacePurgeRequest | dict[str, Any]) -> str:
        """Raises InvalidPurgeRequestError before sending anything, like the Temporal client;
        build the request with icepurge.api.clients.temporal_namespace_client.namespace_request."""
        parsed = parse_namespace_request(request)
        body = parsed.model_dump(mode="json", exclude={"catalog"})
        path = f"/v1/catalogs/{quote(parsed.catalog, safe='')}/namespace-purges"
        answer = await self._call("POST", path, json=body)
        return str(answer["purge_id"])

    async def skipped(self, purge_id: str, offset: int = 0, limit: int = 1000) -> SkippedPage:
        """The entries its enumeration left alone, with why; PurgeNotFoundError while it has no
        table list."""
        params = {"offset": offset, "limit": limit}
        answer = await self._call(
            "GET", resource_path("namespace-purges", purge_id, "skipped"), params=params
        )
        return SkippedPage.model_validate(answer)
