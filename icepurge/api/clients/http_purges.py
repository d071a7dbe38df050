"""What the HTTP client does the same way for a table purge and a namespace purge, each a
resource of its own (`/v1/purges/{id}`, `/v1/namespace-purges/{id}`): its status, its controls
(pause, resume, the rate budget), and waiting for its report."""

from __future__ import annotations

from collections.abc import Collection
from functools import partial
from typing import Generic, TypeVar

from icepurge.api.clients.api_transport import ApiTransport, resource_path
from icepurge.api.clients.status_polling import closed_status
from icepurge.contract.namespace_status import NamespacePurgeStatus
from icepurge.contract.status import PurgeStatus

# Here rather than shared with the Temporal clients: `icepurge purge status` over the API imports
# nothing of Temporal's (tests/api/cli/test_cli_startup.py).
Status = TypeVar("Status", PurgeStatus, NamespacePurgeStatus)
ReportT = TypeVar("ReportT")


class HttpPurges(Generic[Status, ReportT]):
    collection: str
    status_type: type[Status]
    report_type: type[ReportT]
    terminal_states: Collection[object]

    def __init__(self, transport: ApiTransport) -> None:
        self._transport = transport
        self._call = transport.call

    async def status(self, purge_id: str) -> Status:
        return self.status_type.model_validate(
            await self._call("GET", resource_path(self.collection, purge_id))
        )

    async def pause(self, purge_id: str) -> Status:
        return await self._control(purge_id, "pause")

    async def resume(self, purge_id: str) -> Status:
        return await self._control(purge_id, "resume")

    async def set_rate_budget(self, purge_id: str, requests_per_second: float | None) -> Status:
        body = {"bucket_requests_per_second": requests_per_second}
        answer = await self._call("PUT", resource_path(self.collection, purge_id, "rate-budget"), json=body)
        return self.status_type.model_validate(answer)

    async def wait(self, purge_id: str, poll_seconds: float = 0.5) -> ReportT:
        """Polls until the purge ends; raises PurgeFailedError when it ended FAILED or CANCELLED."""
        status, duration = await closed_status(
            purge_id, partial(self.status, purge_id), self.terminal_states, poll_seconds
        )
        report: ReportT = self.report_type(status=status, duration_seconds=duration)  # type: ignore[call-arg]
        return report

    async def _control(self, purge_id: str, action: str) -> Status:
        answer = await self._call("POST", resource_path(self.collection, purge_id, action))
        return self.status_type.model_validate(answer)
