"""Namespace and whole-catalog purges over the HTTP API: the same methods, results and errors as
icepurge.api.clients.temporal_namespace_client.NamespacePurgeClient (which talks to Temporal directly)."""

from __future__ import annotations

from functools import partial
from typing import Any
from urllib.parse import quote

from icepurge.api.clients.api_transport import ApiTransport, resource_path
from icepurge.api.clients.status_polling import closed_status
from icepurge.contract.namespace_request import NamespacePurgeRequest, parse_namespace_request
from icepurge.contract.namespace_status import (
    NAMESPACE_TERMINAL_STATES,
    NamespacePurgeReport,
    NamespacePurgeStatus,
    SkippedPage,
)


class HttpNamespacePurgeClient:
    def __init__(self, transport: ApiTransport) -> None:
        self._call = transport.call

    async def start(self, request: NamespacePurgeRequest | dict[str, Any]) -> str:
        """Raises InvalidPurgeRequestError before sending anything, like the Temporal client;
        build the request with icepurge.api.clients.temporal_namespace_client.namespace_request."""
        parsed = parse_namespace_request(request)
        body = parsed.model_dump(mode="json", exclude={"catalog"})
        path = f"/v1/catalogs/{quote(parsed.catalog, safe='')}/namespace-purges"
        answer = await self._call("POST", path, json=body)
        return str(answer["purge_id"])

    async def status(self, purge_id: str) -> NamespacePurgeStatus:
        return NamespacePurgeStatus.model_validate(
            await self._call("GET", resource_path("namespace-purges", purge_id))
        )

    async def skipped(self, purge_id: str, offset: int = 0, limit: int = 1000) -> SkippedPage:
        """The entries its enumeration left alone, with why; PurgeNotFoundError while it has no
        table list."""
        params = {"offset": offset, "limit": limit}
        answer = await self._call(
            "GET", resource_path("namespace-purges", purge_id, "skipped"), params=params
        )
        return SkippedPage.model_validate(answer)

    async def pause(self, purge_id: str) -> NamespacePurgeStatus:
        return await self._control(purge_id, "pause")

    async def resume(self, purge_id: str) -> NamespacePurgeStatus:
        return await self._control(purge_id, "resume")

    async def set_rate_budget(self, purge_id: str, requests_per_second: float | None) -> NamespacePurgeStatus:
        body = {"bucket_requests_per_second": requests_per_second}
        answer = await self._call(
            "PUT", resource_path("namespace-purges", purge_id, "rate-budget"), json=body
        )
        return NamespacePurgeStatus.model_validate(answer)

    async def _control(self, purge_id: str, action: str) -> NamespacePurgeStatus:
        answer = await self._call("POST", resource_path("namespace-purges", purge_id, action))
        return NamespacePurgeStatus.model_validate(answer)

    async def wait(self, purge_id: str, poll_seconds: float = 0.5) -> NamespacePurgeReport:
        """Polls until it ends; raises PurgeFailedError when it ended FAILED or CANCELLED."""
        status, duration = await closed_status(
            purge_id, partial(self.status, purge_id), NAMESPACE_TERMINAL_STATES, poll_seconds
        )
        return NamespacePurgeReport(status=status, duration_seconds=duration)
