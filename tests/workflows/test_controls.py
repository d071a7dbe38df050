"""Operator controls: pause stops the counters and the deletes, resume finishes the purge, the
rate budget changes mid-purge; from the Python client, the HTTP API and the CLI. The run's
Web UI details follow along, also after continue-as-new. `icepurge admin setup` is idempotent."""

from __future__ import annotations

import asyncio
import json
from uuid import uuid4

import pytest
from google.protobuf.duration_pb2 import Duration
from pyiceberg.catalog.sql import SqlCatalog
from temporalio.api.enums.v1 import IndexedValueType
from temporalio.api.operatorservice.v1 import AddSearchAttributesRequest
from temporalio.api.workflowservice.v1 import RegisterNamespaceRequest
from temporalio.client import Client

from icepurge.api.clients.errors import PurgeAccessDeniedError, PurgeControlRejectedError
from icepurge.api.clients.http_client import HttpPurgeClient
from icepurge.api.clients.temporal_client import PurgeClient
from icepurge.api.server.admin_setup import SearchAttributeConflictError, ensure_search_attributes
from icepurge.contract.counts import Category
from icepurge.contract.names import SEARCH_ATTRIBUTES
from icepurge.contract.states import PurgeState
from icepurge.contract.validation import InvalidPurgeRequestError
from icepurge.devstack.s3_proxy import s3_proxy, through_proxy
from icepurge.devstack.stack import EmbeddedStack
from tests.api_server import TOKENS
from tests.cli_runner import icepurge
from tests.purge_helpers import current_details, least_span_seconds, request_for, status_when
from tests.store import S3Store
from tests.tables import many_files_table

MANIFESTS, FILES = 12, 20


@pytest.mark.usefixtures("purges")
async def test_pause_stops_the_counters_and_resume_finishes_on_a_new_budget(
    catalog: SqlCatalog, temporal_client: Client, s3: S3Store, stack: EmbeddedStack, api_url: str
) -> None:
    table = many_files_table(catalog, ("controls",), "paused", manifests=MANIFESTS, files=FILES)
    purges = PurgeClient(temporal_client, "icepurge-tests")
    admin = HttpPurgeClient(api_url, TOKENS["admin"][0])
    reader = HttpPurgeClient(api_url, TOKENS["a-reader"][0])
    with s3_proxy(stack.ports.s3) as (port, faults):
        faults.delete_delay = 0.3
        request = request_for(table, through_proxy(s3.properties, port), chunk_window=1, express_lane=False)
        purge_id = await purges.start(request)
        # The static summary is the first run's only: continue_as_new can't carry user metadata
        # (temporalio 1.35), so every run's current details name the table too.
        first_run = await temporal_client.get_workflow_handle(purge_id).describe()
        assert await first_run.static_summary() == f"purge {request.table_name}"
        await status_when(purges, purge_id, lambda status: status.files_done > 0)
        with pytest.raises(PurgeAccessDeniedError):
            await reader.pause(purge_id)

        paused = await admin.pause(purge_id)
        assert paused.paused
        held = await status_when(purges, purge_id, lambda status: status.state is PurgeState.PAUSED)
        requests_then = faults.delete_requests
        await asyncio.sleep(4)
        still = await purges.status(purge_id)
        assert still.state is PurgeState.PAUSED
        assert still.files_done == held.files_done, "counters moved while paused"
        assert faults.delete_requests == requests_then, "deletes went on while paused"
        assert 0 < held.files_done < MANIFESTS * FILES
        assert "**PAUSED**" in await current_details(temporal_client, purge_id)

        with pytest.raises(PurgeControlRejectedError, match="already paused"):
            await purges.pause(purge_id)
        with pytest.raises(InvalidPurgeRequestError):
            await admin.set_rate_budget(purge_id, -1)
        budget = 4.0
        changed = await admin.set_rate_budget(purge_id, budget)
        assert changed.bucket_requests_per_second == budget

        code, out, err = await icepurge(stack, "purge", "resume", purge_id)
        assert code == 0, err
        assert out.startswith(f"{purge_id} resumed; now "), (out, err)
        resumed_at = len(faults.delete_times)
        report = await asyncio.wait_for(purges.wait(purge_id), timeout=240)
        after_resume = faults.delete_times[resumed_at:]

    status = report.status
    assert status.state is PurgeState.SUCCEEDED
    assert s3.list(table.location()) == set()
    # Nothing counted twice by the chunk stopped mid-way and run again.
    assert status.counts.of(Category.DATA_FILES).deleted == MANIFESTS * FILES
    manifests = status.counts.of(Category.MANIFESTS)
    assert manifests.deleted + manifests.already_missing == MANIFESTS
    assert len(after_resume) >= 6
    assert after_resume[-1] - after_resume[0] >= least_span_seconds(len(after_resume), budget)
    assert status.run_count > 1, "the purge continued as new"
    details = await current_details(temporal_client, purge_id)
    assert "**SUCCEEDED**" in details
    assert f"| files | {status.files_done:,} / {status.files_total:,} |" in details
    assert f"purge `{request.table_name}`" in details

    with pytest.raises(PurgeControlRejectedError, match="already finished"):
        await purges.resume(purge_id)
    code, _, err = await icepurge(stack, "purge", "pause", purge_id)
    assert code == 2
    assert "already finished" in err


async def test_resume_of_a_running_purge_is_rejected_and_the_cli_sets_a_budget(
    catalog: SqlCatalog, purges: PurgeClient, s3: S3Store, stack: EmbeddedStack, api_url: str
) -> None:
    table = many_files_table(catalog, ("controls",), "not_paused", manifests=8, files=10)
    admin = HttpPurgeClient(api_url, TOKENS["admin"][0])
    with s3_proxy(stack.ports.s3) as (port, faults):
        # Held until the CLI runs are over: a delay was once shorter than two CLI starts on a
        # busy machine, and the second run found the purge finalizing.
        faults.deletes_open.clear()
        purge_id = await purges.start(
            request_for(table, through_proxy(s3.properties, port), chunk_window=1, express_lane=False)
        )
        await asyncio.wait_for(faults.deletes_reached(1), timeout=60)
        with pytest.raises(PurgeControlRejectedError, match="not paused"):
            await admin.resume(purge_id)
        code, _, err = await icepurge(stack, "purge", "rate", purge_id)
        assert code == 2
        assert "--unlimited" in err
        code, out, err = await icepurge(stack, "purge", "rate", purge_id, "50")
        assert code == 0, err
        assert out.startswith(f"{purge_id} budget set to 50 requests/s per bucket; now "), (out, err)
        assert (await purges.status(purge_id)).bucket_requests_per_second == 50
        faults.deletes_open.set()
        report = await asyncio.wait_for(purges.wait(purge_id), timeout=120)
    assert report.status.state is PurgeState.SUCCEEDED


async def _new_namespace(temporal_client: Client, namespace: str) -> None:
    retention = Duration(seconds=86_400)
    request = RegisterNamespaceRequest(namespace=namespace, workflow_execution_retention_period=retention)
    await temporal_client.workflow_service.register_namespace(request)


async def test_admin_setup_registers_the_search_attributes_once(
    temporal_client: Client, stack: EmbeddedStack
) -> None:
    namespace = f"setup-{uuid4().hex[:8]}"
    await _new_namespace(temporal_client, namespace)
    code, out, _ = await icepurge(stack, "doctor", "--json", ICEPURGE_TEMPORAL_NAMESPACE=namespace)
    assert code == 1
    (attributes,) = [check for check in json.loads(out)["checks"] if check["check"] == "search attributes"]
    assert attributes["outcome"] == "FAIL"
    assert "run `icepurge admin setup`" in attributes["detail"]
    code, out, err = await icepurge(stack, "admin", "setup", ICEPURGE_TEMPORAL_NAMESPACE=namespace)
    assert code == 0, err
    assert out.startswith(f"added to {namespace}: ") and "PurgeState" in out
    code, out, _ = await icepurge(stack, "doctor", "--json", ICEPURGE_TEMPORAL_NAMESPACE=namespace)
    (attributes,) = [check for check in json.loads(out)["checks"] if check["check"] == "search attributes"]
    assert attributes["outcome"] == "ok"
    code, out, err = await icepurge(stack, "admin", "setup", ICEPURGE_TEMPORAL_NAMESPACE=namespace)
    assert code == 0, err
    assert out == f"{namespace} was ready\n"
    assert await ensure_search_attributes(temporal_client, namespace) == []


async def test_admin_setup_refuses_an_attribute_of_another_type(temporal_client: Client) -> None:
    namespace = f"setup-{uuid4().hex[:8]}"
    await _new_namespace(temporal_client, namespace)
    first_keyword = next(name for name, kind in SEARCH_ATTRIBUTES if kind == "Keyword")
    await temporal_client.operator_service.add_search_attributes(
        AddSearchAttributesRequest(
            search_attributes={first_keyword: IndexedValueType.INDEXED_VALUE_TYPE_INT}, namespace=namespace
        )
    )
    with pytest.raises(SearchAttributeConflictError, match=f"{first_keyword} exists .* as INT"):
        await ensure_search_attributes(temporal_client, namespace)
