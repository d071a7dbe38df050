"""The Python client over the HTTP API: the same methods, results and errors as
icepurge.api.clients.temporal_client.PurgeClient (which talks to Temporal directly)."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from icepurge.api.clients.api_transport import ApiTransport, resource_path
from icepurge.api.clients.http_namespace_client import HttpNamespacePurgeClient
from icepurge.api.clients.http_purges import HttpPurges
from icepurge.api.clients.listing import PurgeFilter, PurgePage
from icepurge.contract.doctor import DoctorReport, TokenInfo
from icepurge.contract.report_pages import ReportPage
from icepurge.contract.report_sections import ReportSection
from icepurge.contract.request import PurgeOptions, PurgeRequest
from icepurge.contract.started import StartOutcome
from icepurge.contract.states import TERMINAL_STATES
from icepurge.contract.status import PurgeReport, PurgeStatus
from icepurge.contract.validation import parse_request


class HttpPurgeClient(HttpPurges[PurgeStatus, PurgeReport]):
    collection = "purges"
    status_type = PurgeStatus
    report_type = PurgeReport
    terminal_states = TERMINAL_STATES

    def __init__(self, base_url: str, token: str | None = None, timeout: float = 30.0) -> None:
        super().__init__(ApiTransport(base_url, token, timeout))

    async def __aenter__(self) -> HttpPurgeClient:
        return self

    async def __aexit__(self, *_: object) -> None:
        await self._transport.http.aclose()

    async def start(self, request: PurgeRequest | dict[str, Any]) -> str:
        """Raises InvalidPurgeRequestError before sending anything, like the Temporal client."""
        return (await self.begin(request)).purge_id

    async def begin(self, request: PurgeRequest | dict[str, Any]) -> StartOutcome:
        """start, saying whether the start found its purge already closed (the API's answer). A
        purge by name goes to its catalog's route, like purge_by_name."""
        parsed = parse_request(request)
        if not parsed.by_name:
            answer = await self._call("POST", "/v1/purges", json=parsed.model_dump(mode="json"))
            return StartOutcome.model_validate(answer)
        body = parsed.model_dump(
            mode="json",
            include={"namespace", "table", "options", "requested_by", "request_id", "notify_workflow_id"},
        )
        return await self._start_by_name(parsed.catalog, body)

    async def purge_by_name(
        self,
        catalog: str,
        namespace: list[str],
        table: str,
        *,
        requested_by: str | None = None,
        options: PurgeOptions | dict[str, Any] | None = None,
        request_id: str | None = None,
    ) -> str:
        """Drops the table from its catalog and purges it (see PurgeClient.purge_by_name);
        requested_by defaults to the token's name."""
        chosen = options.model_dump(mode="json") if isinstance(options, PurgeOptions) else options or {}
        body: dict[str, Any] = {"namespace": namespace, "table": table, "options": chosen}
        if requested_by is not None:
            body["requested_by"] = requested_by
        if request_id is not None:
            body["request_id"] = request_id
        return (await self._start_by_name(catalog, body)).purge_id

    async def _start_by_name(self, catalog: str, body: dict[str, Any]) -> StartOutcome:
        answer = await self._call("POST", f"/v1/catalogs/{quote(catalog, safe='')}/purges", json=body)
        return StartOutcome.model_validate(answer)

    async def namespace_tables(
        self, purge_id: str, page_size: int = 50, page_token: str | None = None
    ) -> PurgePage:
        """The table purges a namespace purge started, a page at a time."""
        params: dict[str, str | int] = {"page_size": page_size}
        if page_token is not None:
            params["page_token"] = page_token
        return PurgePage.model_validate(
            await self._call("GET", resource_path("purges", purge_id, "tables"), params=params)
        )

    @property
    def namespaces(self) -> HttpNamespacePurgeClient:
        """Namespace and whole-catalog purges, on the same connection."""
        return HttpNamespacePurgeClient(self._transport)

    async def catalogs(self) -> list[str]:
        """The catalogs the API knows that this token may use."""
        answer = await self._call("GET", "/v1/catalogs")
        return [str(item["name"]) for item in answer["catalogs"]]

    async def undrop(self, purge_id: str) -> PurgeStatus:
        return await self._control(purge_id, "undrop")

    async def expedite(self, purge_id: str) -> PurgeStatus:
        return await self._control(purge_id, "expedite")

    async def rerun(self, purge_id: str, file_io_properties: dict[str, str] | None = None) -> str:
        body = {"file_io_properties": file_io_properties}
        answer = await self._call("POST", resource_path("purges", purge_id, "rerun"), json=body)
        return str(answer["purge_id"])

    async def cancel(self, purge_id: str) -> None:
        await self._call("POST", resource_path("purges", purge_id, "cancel"))

    async def list(
        self, purge_filter: PurgeFilter | None = None, page_size: int = 50, page_token: str | None = None
    ) -> PurgePage:
        chosen = purge_filter or PurgeFilter()
        params: dict[str, str | int] = {"page_size": page_size}
        values = {
            "kind": chosen.kind.value if chosen.kind else None,
            "state": chosen.state.value if chosen.state else None,
            "catalog": chosen.catalog,
            # httpx percent-encodes the 0x1F separator itself.
            "namespace": "\x1f".join(chosen.namespace) if chosen.namespace else None,
            "table": chosen.table,
            "requested_by": chosen.requested_by,
            "page_token": page_token,
        }
        params.update({key: value for key, value in values.items() if value is not None})
        return PurgePage.model_validate(await self._call("GET", "/v1/purges", params=params))

    async def report(
        self, purge_id: str, section: ReportSection | None = None, offset: int = 0, limit: int = 1000
    ) -> ReportPage:
        """One page of the purge's report object (section default: would_delete for a dry run,
        failures otherwise); PurgeNotFoundError says why when it has none."""
        params: dict[str, str | int] = {"offset": offset, "limit": limit}
        if section is not None:
            params["section"] = section.value
        return ReportPage.model_validate(
            await self._call("GET", resource_path("purges", purge_id, "report"), params=params)
        )

    async def token_info(self) -> TokenInfo:
        """Who this client's token is: name, roles, catalogs."""
        return TokenInfo.model_validate(await self._call("GET", "/v1/token"))

    async def doctor(self) -> DoctorReport:
        """The API's checks of Temporal, the workers and codec, the state location, catalogs, Spark."""
        return DoctorReport.model_validate(await self._call("GET", "/v1/doctor", timeout=60.0))

    async def ready(self) -> None:
        """Raises PurgeServiceUnavailableError unless the API answers and reaches Temporal."""
        await self._call("GET", "/readyz")
