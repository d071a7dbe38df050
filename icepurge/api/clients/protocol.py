"""What both Python clients promise, over Temporal (PurgeClient) or over HTTP (HttpPurgeClient):
the same methods, answers and typed errors (icepurge.api.clients.errors). Code that takes either
takes a Purges; mypy checks that both implement it wherever one is passed as the other."""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

from icepurge.api.clients.listing import PurgeFilter, PurgePage
from icepurge.contract.namespace_request import NamespacePurgeRequest
from icepurge.contract.namespace_status import NamespacePurgeReport, NamespacePurgeStatus
from icepurge.contract.request import PurgeOptions, PurgeRequest
from icepurge.contract.started import StartOutcome
from icepurge.contract.status import PurgeReport, PurgeStatus


class NamespacePurges(Protocol):
    async def start(self, request: NamespacePurgeRequest | dict[str, Any]) -> str: ...

    async def status(self, purge_id: str) -> NamespacePurgeStatus: ...

    async def wait(self, purge_id: str) -> NamespacePurgeReport: ...

    async def pause(self, purge_id: str) -> NamespacePurgeStatus: ...

    async def resume(self, purge_id: str) -> NamespacePurgeStatus: ...

    async def set_rate_budget(
        self, purge_id: str, requests_per_second: float | None
    ) -> NamespacePurgeStatus: ...


@runtime_checkable
class Purges(Protocol):
    @property
    def namespaces(self) -> NamespacePurges: ...

    async def start(self, request: PurgeRequest | dict[str, Any]) -> str: ...

    async def begin(self, request: PurgeRequest | dict[str, Any]) -> StartOutcome: ...

    async def purge_by_name(
        self,
        catalog: str,
        namespace: list[str],
        table: str,
        *,
        requested_by: str,
        options: PurgeOptions | dict[str, Any] | None = None,
        request_id: str | None = None,
    ) -> str: ...

    async def rerun(self, purge_id: str, file_io_properties: dict[str, str] | None = None) -> str: ...

    async def status(self, purge_id: str) -> PurgeStatus: ...

    async def wait(self, purge_id: str) -> PurgeReport: ...

    async def cancel(self, purge_id: str) -> None: ...

    async def pause(self, purge_id: str) -> PurgeStatus: ...

    async def resume(self, purge_id: str) -> PurgeStatus: ...

    async def undrop(self, purge_id: str) -> PurgeStatus: ...

    async def expedite(self, purge_id: str) -> PurgeStatus: ...

    async def set_rate_budget(self, purge_id: str, requests_per_second: float | None) -> PurgeStatus: ...

    async def list(
        self, purge_filter: PurgeFilter | None = None, page_size: int = 50, page_token: str | None = None
    ) -> PurgePage: ...

    async def namespace_tables(
        self, purge_id: str, page_size: int = 50, page_token: str | None = None
    ) -> PurgePage: ...
