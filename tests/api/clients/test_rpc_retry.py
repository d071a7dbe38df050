"""A call the SDK sends without retries, on a long-lived client whose connection the frontend
closed under it (gRPC CANCELLED "operation was canceled", temporalio/sdk-core#807): `admin setup`,
the doctor and /readyz send it once more instead of failing. Seen as a flake of
test_admin_setup_registers_the_search_attributes_once on a fresh clone; the cut is injected here
on purpose, once, then twice."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any, cast

import pytest
from temporalio.api.enums.v1 import IndexedValueType
from temporalio.api.operatorservice.v1 import ListSearchAttributesResponse
from temporalio.client import Client
from temporalio.service import RPCError, RPCStatusCode

from icepurge.api.server.admin_setup import INDEXED_TYPES, ensure_search_attributes
from icepurge.contract.names import SEARCH_ATTRIBUTES


class _CutOperator:
    def __init__(self, cuts: int) -> None:
        self.cuts = cuts
        self.calls = 0

    async def list_search_attributes(self, _: Any) -> ListSearchAttributesResponse:
        self.calls += 1
        if self.calls <= self.cuts:
            raise RPCError("operation was canceled", RPCStatusCode.CANCELLED, b"")
        every: dict[str, IndexedValueType.ValueType] = {
            name: INDEXED_TYPES[kind] for name, kind in SEARCH_ATTRIBUTES
        }
        return ListSearchAttributesResponse(custom_attributes=every)


def _client(operator: _CutOperator) -> Client:
    return cast(Client, SimpleNamespace(operator_service=operator))


async def test_a_call_cut_once_is_sent_once_more() -> None:
    operator = _CutOperator(cuts=1)
    assert await ensure_search_attributes(_client(operator), "default") == []
    assert operator.calls == 2


async def test_a_second_cut_is_the_callers() -> None:
    operator = _CutOperator(cuts=2)
    with pytest.raises(RPCError, match="operation was canceled"):
        await ensure_search_attributes(_client(operator), "default")
    assert operator.calls == 2
