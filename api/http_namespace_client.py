"""Namespace and whole-catalog purges over the HTTP API: the same methods, results and errors as
api.namespace_client.NamespacePurgeClient (which talks to Temporal directly)."""

from __future__ import annotations

import asyncio
from typing import Any
from urllib.parse import quote

from api.api_transport import ApiTransport
from api.errors import PurgeFailedError
from workflows.namespace_request import NamespacePurgeRequest, parse_namespace_request
from workflows.namespace_status import (
    NAMESPACE_TERMINAL_STATES,
    NamespacePurgeReport,
    NamespacePurgeState,
    NamespacePurgeStatus,
)


class HttpNamespacePurgeClient:
    def __init__(self, transport: ApiTransport) -> None:
        self._call = transport.call

    async def start(self, request: NamespacePurgeRequest | dict[str, Any]) -> str:
        """Raises InvalidPurgeRequestError before sending anything, like the Temporal client;
        build the request with api.namespace_client.namespace_request."""
        parsed = parse_namespace_request(request)
        body = parsed.model_dump(mode="json", exclude={"catalog"})
        path = f"/v1/catalogs/{quote(parsed.catalog, safe='')}/namespace-purges"
        answer = await self._call("POST", path, json=body)
        return str(answer["purge_id"])

    async def status(self, purge_id: str) -> NamespacePurgeStatus:
        return NamespacePurgeStatus.model_validate(
            await self._call("GET", f"/v1/namespace-purges/{purge_id}")
        )

    async def pause(self, purge_id: str) -> NamespacePurgeStatus:
        return await self._control(purge_id, "pause")

    async def resume(self, purge_id: str) -> NamespacePurgeStatus:
        return await self._control(purge_id, "resume")

    async def set_rate_budget(self, purge_id: str, requests_per_second: float | None) -> NamespacePurgeStatus:
        body = {"bucket_requests_per_second": requests_per_second}
        answer = await self._call("PUT", f"/v1/namespace-purges/{purge_id}/rate-budget", json=body)
        return NamespacePurgeStatus.model_validate(answer)

    async def _control(self, purge_id: str, action: str) -> NamespacePurgeStatus:
        answer = await self._call("POST", f"/v1/namespace-purges/{purge_id}/{action}")
        return NamespacePurgeStatus.model_validate(answer)

    async def wait(self, purge_id: str, poll_seconds: float = 0.5) -> NamespacePurgeReport:
        """Polls until it ends; raises PurgeFailedError when it ended FAILED or CANCELLED."""
        while True:
            status = await self.status(purge_id)
            if status.state in NAMESPACE_TERMINAL_STATES:
                break
            await asyncio.sleep(poll_seconds)
        if status.state in (NamespacePurgeState.FAILED, NamespacePurgeState.CANCELLED):
            reason = status.last_error or status.state.value.lower()
            raise PurgeFailedError(purge_id, status.state.value, reason, status.error_type)
        finished, started = status.finished_at, status.started_at
        duration = (finished - started).total_seconds() if finished and started else 0.0
        return NamespacePurgeReport(status=status, duration_seconds=duration)
