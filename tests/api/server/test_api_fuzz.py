"""Schemathesis against the served OpenAPI spec: generated requests to every operation, valid
and invalid, find no 5xx. Purges it starts go to a queue no worker polls.

Schemathesis' pytest plugin does not run under pytest 9 (it reads `Function._nodeid`), so each
operation's Hypothesis strategy is driven directly."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from schemathesis.checks import not_a_server_error
from schemathesis.core.result import Ok
from schemathesis.openapi.loaders import from_url

from icepurge.api.server.settings import ApiSettings
from icepurge.devstack.api_server import serve_api
from tests.api_server import bearer

EXAMPLES_PER_OPERATION = 25


@pytest.fixture(scope="module")
def served_schema(api_settings: ApiSettings) -> Iterator[schemathesis.BaseSchema]:
    with serve_api(api_settings.model_copy(update={"task_queue": "icepurge-fuzz"})) as url:
        yield from_url(f"{url}/openapi.json")


def test_no_server_errors(served_schema: schemathesis.BaseSchema) -> None:
    results = list(served_schema.get_all_operations())
    operations = [result.ok() for result in results if isinstance(result, Ok)]
    assert len(operations) == len(results), "the served OpenAPI spec has invalid operations"
    assert {operation.path for operation in operations} >= {"/v1/purges", "/v1/purges/{purge_id}"}
    calls: list[int] = []
    for operation in operations:

        @given(case=operation.as_strategy())
        @settings(max_examples=EXAMPLES_PER_OPERATION, deadline=None, suppress_health_check=list(HealthCheck))
        def call(case: schemathesis.Case[Any]) -> None:
            response = case.call_and_validate(headers=bearer("admin"), checks=[not_a_server_error])
            calls.append(response.status_code)

        call()
    assert len(calls) >= len(operations) * 5
