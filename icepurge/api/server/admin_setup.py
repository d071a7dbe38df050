"""`icepurge admin setup`: registers icepurge's search attributes on a Temporal cluster.

Idempotent: attributes already there with the right type are left alone; one there with
another type is an error, since Temporal can't change a type in place."""

from __future__ import annotations

from temporalio.api.enums.v1 import IndexedValueType
from temporalio.api.operatorservice.v1 import AddSearchAttributesRequest, ListSearchAttributesRequest
from temporalio.client import Client

from icepurge.connection.rpc_retry import once_more_if_cut
from icepurge.contract.names import SEARCH_ATTRIBUTES

INDEXED_TYPES = {
    "Keyword": IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD,
    "Int": IndexedValueType.INDEXED_VALUE_TYPE_INT,
    "Datetime": IndexedValueType.INDEXED_VALUE_TYPE_DATETIME,
}


class SearchAttributeConflictError(RuntimeError):
    """A search attribute exists with another type; rename or remove it, then run setup again."""


async def ensure_search_attributes(client: Client, namespace: str) -> list[str]:
    """Adds the missing attributes to `namespace`; returns their names (empty when none were).
    Idempotent, so sent once more whole if its connection was cut."""
    return await once_more_if_cut(lambda: _ensure(client, namespace))


async def _ensure(client: Client, namespace: str) -> list[str]:
    listed = await client.operator_service.list_search_attributes(
        ListSearchAttributesRequest(namespace=namespace)
    )
    existing = dict(listed.custom_attributes)
    missing: dict[str, IndexedValueType.ValueType] = {}
    for name, kind in SEARCH_ATTRIBUTES:
        wanted = INDEXED_TYPES[kind]
        found = existing.get(name)
        if found is None:
            missing[name] = wanted
        elif found != wanted:
            have = IndexedValueType.Name(found).removeprefix("INDEXED_VALUE_TYPE_")
            raise SearchAttributeConflictError(
                f"search attribute {name} exists in namespace {namespace} as {have}, icepurge needs "
                f"{kind}: remove it (temporal operator search-attribute remove) and run setup again"
            )
    if missing:
        await client.operator_service.add_search_attributes(
            AddSearchAttributesRequest(search_attributes=missing, namespace=namespace)
        )
    return sorted(missing)
