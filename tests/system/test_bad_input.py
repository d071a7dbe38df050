"""Bad requests are refused before any workflow starts; terminal metadata faults end FAILED
promptly, naming the file and the cause, with no endless retry."""

from __future__ import annotations

import asyncio
import json

import pytest
from pyiceberg.catalog.sql import SqlCatalog
from temporalio.api.enums.v1 import EventType
from temporalio.client import Client, WorkflowFailureError
from temporalio.exceptions import ApplicationError

from icepurge.api.clients.errors import PurgeFailedError
from icepurge.api.clients.temporal_client import PurgeClient
from icepurge.contract.names import (
    ERROR_INVALID_REQUEST,
    ERROR_METADATA_ACCESS_DENIED,
    ERROR_METADATA_CORRUPT,
    ERROR_METADATA_NOT_FOUND,
    ERROR_UNSUPPORTED_FORMAT,
    PLAN_ACTIVITY,
    PLAN_AND_FINISH_ACTIVITY,
    WORKFLOW_TYPE,
)
from icepurge.contract.request import PurgeRequest
from icepurge.contract.states import PurgeState
from icepurge.contract.validation import InvalidPurgeRequestError, parse_request
from tests.purge_helpers import request_for
from tests.store import S3Store
from tests.tables import simple_table

VALID = {
    "catalog": "tests",
    "namespace": ["bad"],
    "table": "t",
    "metadata_location": "s3://warehouse/tests/bad/t/metadata/00000-x.metadata.json",
    "requested_by": "pytest",
}


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"namespace": []}, "namespace"),
        ({"namespace": ["ok", ""]}, "namespace"),
        ({"metadata_location": "ftp://host/x.metadata.json"}, "metadata_location"),
        ({"metadata_location": "s3://bucket/not-metadata.txt"}, "metadata_location"),
        ({"table": ""}, "table"),
        ({"requested_by": None}, "requested_by"),
        ({"options": {"concurrency": 0}}, "options.concurrency"),
        ({"options": {"engine": "mapreduce"}}, "options.engine"),
        ({"unknown_field": 1}, "unknown_field"),
    ],
)
async def test_malformed_request_is_refused_before_any_workflow_starts(
    purges: PurgeClient, temporal_client: Client, change: dict[str, object], field: str
) -> None:
    before = (await temporal_client.count_workflows(f"WorkflowType='{WORKFLOW_TYPE}'")).count
    with pytest.raises(InvalidPurgeRequestError) as refused:
        await purges.start({**VALID, **change})
    assert field in str(refused.value)
    after = (await temporal_client.count_workflows(f"WorkflowType='{WORKFLOW_TYPE}'")).count
    assert after == before


def test_secrets_never_appear_in_a_validation_error() -> None:
    with pytest.raises(InvalidPurgeRequestError) as refused:
        parse_request({**VALID, "file_io_properties": {"s3.secret-access-key": 42}, "table": ""})
    assert "42" not in str(refused.value)
    request = PurgeRequest.model_validate(
        {**VALID, "file_io_properties": {"s3.secret-access-key": "hunter2"}}
    )
    assert "hunter2" not in repr(request)


def _request_at(location: str, s3: S3Store) -> PurgeRequest:
    return PurgeRequest.model_validate(
        {**VALID, "metadata_location": location, "file_io_properties": s3.properties}
    )


async def _fails_with(purges: PurgeClient, request: PurgeRequest) -> tuple[PurgeFailedError, str]:
    purge_id = await purges.start(request)
    # A guard against an endless retry, not a speed target.
    with pytest.raises(PurgeFailedError) as failed:
        await asyncio.wait_for(purges.wait(purge_id), timeout=120)
    assert failed.value.state == "FAILED"
    status = await purges.status(purge_id)
    assert (status.error_type, status.last_error) == (failed.value.error_type, failed.value.reason)
    return failed.value, purge_id


async def _plan_attempts(temporal_client: Client, purge_id: str) -> int:
    """Attempts of the plan activity (history records one started event, with its attempt)."""
    history = await temporal_client.get_workflow_handle(purge_id).fetch_history()
    plan = {
        event.event_id
        for event in history.events
        if event.activity_task_scheduled_event_attributes.activity_type.name
        in (PLAN_ACTIVITY, PLAN_AND_FINISH_ACTIVITY)
    }
    return sum(
        event.activity_task_started_event_attributes.attempt
        for event in history.events
        if event.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED
        and event.activity_task_started_event_attributes.scheduled_event_id in plan
    )


async def test_missing_metadata_file_fails_with_its_location(
    purges: PurgeClient, temporal_client: Client, s3: S3Store
) -> None:
    location = "s3://warehouse/tests/bad/missing/metadata/00001-gone.metadata.json"
    cause, purge_id = await _fails_with(
        purges,
        _request_at(location, s3),
    )
    assert cause.error_type == ERROR_METADATA_NOT_FOUND
    assert location in cause.reason
    assert await _plan_attempts(temporal_client, purge_id) == 1
    status = await purges.status(purge_id)
    assert status.state is PurgeState.FAILED
    assert status.last_error is not None and location in status.last_error


async def test_wrong_credentials_fail_as_access_denied(
    catalog: SqlCatalog, purges: PurgeClient, temporal_client: Client, s3: S3Store
) -> None:
    table = simple_table(catalog, ("bad",), "creds", appends=1)
    wrong = {**s3.properties, "s3.secret-access-key": "not-the-secret"}
    cause, purge_id = await _fails_with(purges, request_for(table, wrong))
    assert cause.error_type == ERROR_METADATA_ACCESS_DENIED
    assert table.metadata_location in cause.reason
    assert "not-the-secret" not in str(cause)
    assert await _plan_attempts(temporal_client, purge_id) == 1
    assert s3.list(table.location())


@pytest.mark.parametrize(
    ("content", "kind"),
    [
        (b'{"format-version": 2, "table-uuid": ', ERROR_METADATA_CORRUPT),
        (b"\x00\x01binary", ERROR_METADATA_CORRUPT),
        (json.dumps({"format-version": 2, "location": "s3://x"}).encode(), ERROR_METADATA_CORRUPT),
        (json.dumps({"format-version": 9}).encode(), ERROR_UNSUPPORTED_FORMAT),
    ],
)
async def test_corrupt_metadata_fails_naming_the_cause(
    purges: PurgeClient, s3: S3Store, content: bytes, kind: str
) -> None:
    location = f"s3://warehouse/tests/bad/corrupt/metadata/{abs(hash(content))}.metadata.json"
    s3.put(location, content)
    cause, _ = await _fails_with(
        purges,
        _request_at(location, s3),
    )
    assert cause.error_type == kind
    assert location in cause.reason


async def test_raw_start_with_bad_json_fails_naming_the_field(
    temporal_client: Client, purges: PurgeClient
) -> None:
    """Catalogs in other languages start the workflow directly: the workflow validates too."""
    handle = await temporal_client.start_workflow(
        WORKFLOW_TYPE,
        {**VALID, "namespace": "not-a-list"},
        id="raw-bad-request",
        task_queue="icepurge-tests",
    )
    with pytest.raises(WorkflowFailureError) as failed:
        await asyncio.wait_for(handle.result(), timeout=60)
    cause = failed.value.cause
    assert isinstance(cause, ApplicationError)
    assert cause.type == ERROR_INVALID_REQUEST
    assert "namespace" in cause.message
