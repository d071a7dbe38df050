"""The purge's typed search attributes: set when a purge starts, upserted at state changes and
after each chunk (never per file), so visibility queries and the Web UI's filter find runs."""

from __future__ import annotations

from typing import Any

from temporalio.common import (
    SearchAttributeKey,
    SearchAttributePair,
    SearchAttributeUpdate,
    TypedSearchAttributes,
)

from icepurge.contract.namespace_status import NamespacePurgeStatus
from icepurge.contract.request import PurgeRequest, encode_namespace
from icepurge.contract.status import PurgeStatus

STATE = SearchAttributeKey.for_keyword("PurgeState")
CATALOG = SearchAttributeKey.for_keyword("PurgeCatalog")
NAMESPACE = SearchAttributeKey.for_keyword("PurgeNamespace")
TABLE = SearchAttributeKey.for_keyword("PurgeTable")
REQUESTED_BY = SearchAttributeKey.for_keyword("PurgeRequestedBy")
FILES_TOTAL = SearchAttributeKey.for_int("PurgeFilesTotal")
FILES_DELETED = SearchAttributeKey.for_int("PurgeFilesDeleted")
FILES_FAILED = SearchAttributeKey.for_int("PurgeFilesFailed")
SCHEDULED_FOR = SearchAttributeKey.for_datetime("PurgeScheduledFor")
PARENT = SearchAttributeKey.for_keyword("PurgeParent")


def _identity_pairs(request: PurgeRequest) -> list[SearchAttributePair[str]]:
    return [
        SearchAttributePair(CATALOG, request.catalog),
        SearchAttributePair(NAMESPACE, encode_namespace(request.namespace)),
        SearchAttributePair(TABLE, request.table),
        SearchAttributePair(REQUESTED_BY, request.requested_by),
    ]


def start_attributes(request: PurgeRequest, parent_id: str | None = None) -> TypedSearchAttributes:
    """What a client, or a namespace purge (`parent_id`), sets when it starts a purge."""
    pairs: list[SearchAttributePair[Any]] = [*_identity_pairs(request), SearchAttributePair(STATE, "PENDING")]
    if parent_id is not None:
        pairs.append(SearchAttributePair(PARENT, parent_id))
    return TypedSearchAttributes(pairs)


def namespace_updates(status: NamespacePurgeStatus) -> list[SearchAttributeUpdate[Any]]:
    """A namespace purge's own attributes: its identity, state and files so far."""
    return [
        CATALOG.value_set(status.catalog),
        NAMESPACE.value_set(encode_namespace(status.namespace)),
        REQUESTED_BY.value_set(status.requested_by),
        STATE.value_set(status.state.value),
        FILES_TOTAL.value_set(status.files.planned),
        FILES_DELETED.value_set(status.files.deleted),
        FILES_FAILED.value_set(status.files.failed),
    ]


def identity_updates(request: PurgeRequest) -> list[SearchAttributeUpdate[Any]]:
    """The same, set by the workflow itself (a start from any SDK or the CLI may lack them)."""
    return [pair.key.value_set(pair.value) for pair in _identity_pairs(request)]


def scheduled_update(status: PurgeStatus) -> list[SearchAttributeUpdate[Any]]:
    """When a soft-deleted purge's deletes begin: the Web UI and visibility queries can sort and
    filter by it."""
    return [SCHEDULED_FOR.value_set(status.scheduled_for)] if status.scheduled_for else []


def progress_updates(status: PurgeStatus) -> list[SearchAttributeUpdate[Any]]:
    """The attributes that change as a purge runs."""
    total = status.counts.total()
    return [
        STATE.value_set(status.state.value),
        FILES_TOTAL.value_set(status.files_total),
        FILES_DELETED.value_set(total.deleted),
        FILES_FAILED.value_set(total.failed),
    ]
