"""One HTTP connection to the icepurge API and the mapping of its answers to the typed errors
both client transports raise."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

import httpx

from icepurge.api.clients.errors import (
    PurgeAccessDeniedError,
    PurgeControlRejectedError,
    PurgeNotFoundError,
    PurgeServiceUnavailableError,
)
from icepurge.contract.validation import InvalidPurgeRequestError


def resource_path(collection: str, purge_id: str, action: str = "") -> str:
    """`/v1/{collection}/{id}[/{action}]`, the id escaped: whatever an id holds, it stays one segment."""
    path = f"/v1/{collection}/{quote(purge_id, safe='')}"
    return f"{path}/{action}" if action else path


def _detail(response: httpx.Response) -> str:
    try:
        detail = response.json().get("detail")
    except ValueError:
        return response.text[:200]
    return detail if isinstance(detail, str) else str(detail)


class ApiTransport:
    def __init__(self, base_url: str, token: str | None = None, timeout: float = 30.0) -> None:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        self.base_url = base_url.rstrip("/")
        self.http = httpx.AsyncClient(base_url=self.base_url, headers=headers, timeout=timeout)

    async def call(self, method: str, path: str, **arguments: Any) -> Any:
        try:
            response = await self.http.request(method, path, **arguments)
        except httpx.TransportError as error:
            raise PurgeServiceUnavailableError(
                f"icepurge API unreachable at {self.base_url} ({type(error).__name__}): start it "
                "(`make run` or `icepurge api`) or point ICEPURGE_API_URL at it"
            ) from None
        if response.status_code < 400:
            return response.json()
        raise error_for(response)


def error_for(response: httpx.Response) -> Exception:
    detail = _detail(response)
    status = response.status_code
    if status in (401, 403):
        hint = "" if status == 403 else " (set ICEPURGE_API_TOKEN or ICEPURGE_API_TOKEN_FILE)"
        return PurgeAccessDeniedError(f"{detail}{hint}", status)
    if status == 404:
        return PurgeNotFoundError(detail)
    if status == 409:
        return PurgeControlRejectedError(detail)
    if status in (413, 422):
        return InvalidPurgeRequestError(detail)
    if status == 503:
        return PurgeServiceUnavailableError(detail, float(response.headers.get("Retry-After", "5")))
    return PurgeServiceUnavailableError(f"icepurge API answered {status}: {detail}")
