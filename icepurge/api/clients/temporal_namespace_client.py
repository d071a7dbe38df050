"""Namespace and whole-catalog purges over Temporal directly: start, status, wait."""

from __future__ import annotations

from contextlib import suppress
from typing import Any

from temporalio.common import (
    SearchAttributePair,
    TypedSearchAttributes,
    WorkflowIDConflictPolicy,
    WorkflowIDReusePolicy,
)
from temporalio.exceptions import WorkflowAlreadyStartedError
from temporalio.service import RPCError

from icepurge.api.clients.temporal_results import translate_rpc_error
from icepurge.api.clients.workflow_purges import WorkflowPurges
from icepurge.contract import search_attributes as attributes
from icepurge.contract.names import (
    NAMESPACE_WORKFLOW_TYPE,
)
from icepurge.contract.namespace_request import (
    NamespacePurgeRequest,
    namespace_purge_id_for,
    parse_namespace_request,
)
from icepurge.contract.namespace_status import NamespacePurgeReport, NamespacePurgeStatus
from icepurge.contract.priorities import bulk_priority, bulk_queue
from icepurge.contract.request import PurgeOptions, encode_namespace
from icepurge.contract.table_selection import TableSelection


def namespace_request(
    catalog: str,
    namespace: list[str],
    *,
    requested_by: str,
    recursive: bool = False,
    max_concurrent_tables: int | None = None,
    batch_tables: int | None = None,
    range_tables: int | None = None,
    confirm: str | None = None,
    options: PurgeOptions | dict[str, Any] | None = None,
    request_id: str | None = None,
    notify_workflow_id: str | None = None,
    tenant: str | None = None,
    selection: TableSelection | dict[str, Any] | None = None,
) -> NamespacePurgeRequest:
    """Raises InvalidPurgeRequestError naming the bad fields."""
    chosen = options.model_dump(mode="json") if isinstance(options, PurgeOptions) else options or {}
    raw: dict[str, Any] = {
        "catalog": catalog,
        "namespace": namespace,
        "recursive": recursive,
        "confirm": confirm,
        "requested_by": requested_by,
        "request_id": request_id,
        "notify_workflow_id": notify_workflow_id,
        "tenant": tenant,
        "range_tables": range_tables,
        "options": chosen,
        "selection": selection.model_dump(mode="json")
        if isinstance(selection, TableSelection)
        else selection,
    }
    if max_concurrent_tables is not None:
        raw["max_concurrent_tables"] = max_concurrent_tables
    if batch_tables is not None:
        raw["batch_tables"] = batch_tables
    return parse_namespace_request(raw)


class NamespacePurgeClient(WorkflowPurges[NamespacePurgeStatus, NamespacePurgeReport]):
    status_type = NamespacePurgeStatus
    report_type = NamespacePurgeReport

    async def start(self, request: NamespacePurgeRequest | dict[str, Any]) -> str:
        """Starts a namespace purge, or returns the namespace's running one (or, with a request
        id, the one that id started, even closed)."""
        parsed = parse_namespace_request(request)
        purge_id = namespace_purge_id_for(parsed)
        reuse = (
            WorkflowIDReusePolicy.REJECT_DUPLICATE
            if parsed.request_id is not None
            else WorkflowIDReusePolicy.ALLOW_DUPLICATE
        )
        with suppress(WorkflowAlreadyStartedError):
            try:
                await self._client.start_workflow(
                    NAMESPACE_WORKFLOW_TYPE,
                    parsed.model_dump(mode="json"),
                    id=purge_id,
                    task_queue=bulk_queue(self._task_queue),
                    id_conflict_policy=WorkflowIDConflictPolicy.USE_EXISTING,
                    id_reuse_policy=reuse,
                    static_summary=f"purge every table of {parsed.name}",
                    priority=bulk_priority(parsed.catalog, parsed.tenant),
                    search_attributes=TypedSearchAttributes(
                        [
                            SearchAttributePair(attributes.CATALOG, parsed.catalog),
                            SearchAttributePair(attributes.NAMESPACE, encode_namespace(parsed.namespace)),
                            SearchAttributePair(attributes.REQUESTED_BY, parsed.requested_by),
                            SearchAttributePair(attributes.STATE, "PENDING"),
                        ]
                    ),
                )
            except RPCError as error:
                raise translate_rpc_error(error) from None
        return purge_id
