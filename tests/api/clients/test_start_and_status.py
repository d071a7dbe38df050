"""Starting a purge: idempotent, from Python or from the `temporal` CLI; status during and after."""

from __future__ import annotations

import asyncio
import json

import pytest
from pyiceberg.catalog.sql import SqlCatalog
from temporalio.client import Client

from icepurge.api.clients.errors import PurgeFailedError
from icepurge.api.clients.temporal_client import PurgeClient
from icepurge.contract.names import STATUS_QUERY
from icepurge.contract.purge_id import purge_id_for
from icepurge.contract.states import PurgeState
from icepurge.devstack.s3_proxy import s3_proxy, through_proxy
from icepurge.devstack.stack import EmbeddedStack
from tests.cli_runner import codec_arguments, start_with_temporal_cli, temporal_cli
from tests.purge_helpers import request_for, sealed_history
from tests.store import S3Store
from tests.tables import many_files_table, simple_table


async def test_duplicate_start_attaches_to_the_running_purge(
    catalog: SqlCatalog, purges: PurgeClient, temporal_client: Client, s3: S3Store, stack: EmbeddedStack
) -> None:
    table = many_files_table(catalog, ("start",), "dup", manifests=4, files=20)
    with s3_proxy(stack.ports.s3) as (port, faults):
        faults.delete_delay = 0.2
        properties = through_proxy(s3.properties, port)
        first = await purges.start(request_for(table, properties))
        run = (await temporal_client.get_workflow_handle(first).describe()).run_id
        second = await purges.start(request_for(table, properties))
        assert second == first
        assert (await temporal_client.get_workflow_handle(second).describe()).run_id == run
        await purges.wait(first)
    executions = [execution async for execution in temporal_client.list_workflows(f"WorkflowId='{first}'")]
    assert len(executions) == 1


async def test_status_moves_during_the_run_and_answers_after_it(
    catalog: SqlCatalog, purges: PurgeClient, s3: S3Store, stack: EmbeddedStack
) -> None:
    table = many_files_table(catalog, ("start",), "progress", manifests=8, files=20)
    with s3_proxy(stack.ports.s3) as (port, faults):
        faults.delete_delay = 0.3
        properties = through_proxy(s3.properties, port)
        purge_id = await purges.start(request_for(table, properties, chunk_window=1, express_lane=False))
        seen: list[tuple[PurgeState, int]] = []
        while True:
            status = await purges.status(purge_id)
            seen.append((status.state, status.chunks_done))
            if status.state in (PurgeState.SUCCEEDED, PurgeState.FAILED):
                break
            await asyncio.sleep(0.1)
    mid_run = [done for state, done in seen if state is PurgeState.DELETING]
    assert len(set(mid_run)) >= 2, seen
    final = await purges.status(purge_id)
    assert final.state is PurgeState.SUCCEEDED
    assert final.chunks_done == final.chunks_total >= 4
    assert final.files_done == final.files_total
    assert final.finished_at is not None
    assert "s3.secret-access-key" not in final.model_dump_json()


async def test_start_from_the_temporal_cli_with_the_documented_json(
    catalog: SqlCatalog, purges: PurgeClient, s3: S3Store, stack: EmbeddedStack, api_url: str
) -> None:
    """Through the API's codec server the CLI seals the request it sends and reads the status."""
    table = simple_table(catalog, ("start", "cli level"), "from_cli")
    request = request_for(table, s3.properties)
    document = {
        "catalog": request.catalog,
        "namespace": request.namespace,
        "table": request.table,
        "metadata_location": request.metadata_location,
        "file_io_properties": request.file_io_properties,
        "requested_by": "temporal-cli",
        "options": {"dry_run": False},
    }
    purge_id = purge_id_for(request)
    await start_with_temporal_cli(stack, api_url, purge_id, document)
    report = await purges.wait(purge_id)
    assert report.status.state is PurgeState.SUCCEEDED
    assert report.status.requested_by == "temporal-cli"
    assert s3.list(table.location()) == set()
    queried = await temporal_cli(
        stack,
        "workflow",
        "query",
        "--workflow-id",
        purge_id,
        "--name",
        STATUS_QUERY,
        "--output",
        "json",
        *codec_arguments(api_url),
    )
    status = json.loads(queried)["queryResult"][0]
    assert status["state"] == "SUCCEEDED"
    assert status["namespace"] == ["start", "cli level"]
    history = await sealed_history(stack, purge_id)
    assert s3.properties["s3.secret-access-key"].encode() not in history


async def _listed(stack: EmbeddedStack, query: str, purge_id: str) -> bool:
    """Visibility is eventually consistent: polls the real CLI's list for a while."""
    for _ in range(50):
        if purge_id in await temporal_cli(stack, "workflow", "list", "--query", query, "--output", "json"):
            return True
        await asyncio.sleep(0.2)
    return False


async def test_visibility_queries_through_the_temporal_cli_find_runs_by_state(
    catalog: SqlCatalog, purges: PurgeClient, s3: S3Store, stack: EmbeddedStack
) -> None:
    done = request_for(simple_table(catalog, ("start",), "visible_ok", appends=1), s3.properties)
    broken = request_for(simple_table(catalog, ("start",), "visible_failed", appends=1), s3.properties)
    broken = broken.model_copy(
        update={
            "metadata_location": broken.snapshot_location().replace(".metadata.json", "-gone.metadata.json")
        }
    )
    done_id = await purges.start(done)
    await purges.wait(done_id)
    broken_id = await purges.start(broken)
    with pytest.raises(PurgeFailedError):
        await purges.wait(broken_id)

    succeeded = "PurgeState = 'SUCCEEDED' AND PurgeTable = 'visible_ok' AND PurgeFilesDeleted > 0"
    assert await _listed(stack, succeeded, done_id)
    assert await _listed(stack, "PurgeState = 'FAILED' AND PurgeTable = 'visible_failed'", broken_id)
    by_catalog = f"PurgeCatalog = '{done.catalog}' AND PurgeNamespace = 'start' AND PurgeState = 'FAILED'"
    listed = await temporal_cli(stack, "workflow", "list", "--query", by_catalog, "--output", "json")
    assert broken_id in listed
    assert done_id not in listed
