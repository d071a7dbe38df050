"""`icepurge doctor`: every check passes on a healthy stack, and each broken part fails its own
check with the fix in plain words (exit code 1)."""

from __future__ import annotations

import json
from pathlib import Path

from pyiceberg.catalog.sql import SqlCatalog
from temporalio.client import Client
from temporalio.worker import Worker

from icepurge.api.clients.temporal_client import PurgeClient
from icepurge.connection.payload_codec import new_key
from icepurge.devstack.free_ports import free_ports
from icepurge.devstack.stack import EmbeddedStack
from icepurge.worker.sandbox_runner import sandboxed_runner
from icepurge.workflows.shared.echo import ECHO_WORKFLOW_TYPE, EchoWorkflow
from tests.api_server import TOKENS
from tests.cli_runner import icepurge, icepurge_over_api
from tests.conftest import PASS_THROUGH_CATALOG
from tests.purge_helpers import request_for
from tests.store import S3Store
from tests.tables import simple_table


def outcomes(stdout: str) -> dict[str, tuple[str, str]]:
    return {check["check"]: (check["outcome"], check["detail"]) for check in json.loads(stdout)["checks"]}


# The Web UI's and `temporal workflow list`'s filter for purges only (docs/clients.md, "icepurge doctor").
PURGES_ONLY = "PurgeState IS NOT NULL"


async def test_doctor_through_the_api_passes_every_check(
    api_url: str,
    purges: PurgeClient,
    temporal_client: Client,
    catalog: SqlCatalog,
    s3: S3Store,
    tmp_path: Path,
) -> None:
    await purges.wait(
        await purges.start(request_for(simple_table(catalog, ("doctor",), "listed"), s3.properties))
    )
    code, stdout, stderr = await icepurge_over_api(
        api_url, "doctor", "--json", ICEPURGE_API_TOKEN=TOKENS["a-reader"][0]
    )
    assert code == 0, stdout + stderr
    found = outcomes(stdout)
    assert found["token"] == ("ok", "'a-reader': roles read; catalogs api-a")
    for check in ("api", "temporal", "search attributes", "workers and codec", "state location"):
        assert found[check][0] == "ok", found[check]
    assert "sealed payload round-tripped" in found["workers and codec"][1]
    assert found["catalog lake"][0] == "ok"
    # Pass-through: the API holds no credential for it, so there is nothing of its own to check.
    assert found[f"catalog {PASS_THROUGH_CATALOG}"][0] == "skipped"
    assert found["spark"][0] == "skipped"
    assert "all checks passed" in stderr

    code, table, _ = await icepurge_over_api(api_url, "doctor", ICEPURGE_API_TOKEN=TOKENS["a-reader"][0])
    assert code == 0
    assert "workers and codec" in table
    assert table.splitlines()[-1] == "all checks passed"
    # The probes are deleted (the server does it within a minute); until then the Web UI's
    # documented filter `PurgeState IS NOT NULL` shows purges and no probe.
    probes = f"WorkflowType = '{ECHO_WORKFLOW_TYPE}'"
    assert (await temporal_client.count_workflows(f"{probes} AND {PURGES_ONLY}")).count == 0
    assert (await temporal_client.count_workflows(PURGES_ONLY)).count > 0


async def test_doctor_names_the_fix_for_each_broken_part(
    api_url: str, purges: PurgeClient, stack: EmbeddedStack
) -> None:
    (closed,) = free_ports(1)
    code, stdout, _ = await icepurge(
        stack,
        "doctor",
        "--json",
        ICEPURGE_API_URL=api_url,
        ICEPURGE_CODEC_KEYS=json.dumps({"other": new_key()}),
        ICEPURGE_STATE_LOCATION="s3://icepurge-state/doctor",
        ICEPURGE_STATE_IO_PROPERTIES=json.dumps({**stack.s3_properties, "s3.secret-access-key": "wrong"}),
        ICEPURGE_SPARK_MASTER=f"spark://127.0.0.1:{closed}",
    )
    assert code == 1
    found = outcomes(stdout)
    assert found["token"][0] == "FAIL"
    assert "ICEPURGE_API_TOKEN" in found["token"][1]
    assert found["workers and codec"][0] == "FAIL"
    assert "ICEPURGE_CODEC_KEYS" in found["workers and codec"][1]
    assert found["state location"][0] == "FAIL"
    assert "ICEPURGE_STATE_IO_PROPERTIES" in found["state location"][1]
    assert found["spark"][0] == "FAIL"
    assert found["temporal"][0] == "ok"

    code, stdout, _ = await icepurge(
        stack, "doctor", "--json", ICEPURGE_API_URL=f"http://127.0.0.1:{closed}",
        ICEPURGE_TEMPORAL_ADDRESS=f"127.0.0.1:{closed}",
    )  # fmt: skip
    assert code == 1
    found = outcomes(stdout)
    assert found["api"][0] == "FAIL"
    assert "ICEPURGE_API_URL" in found["api"][1]
    assert found["temporal"][0] == "FAIL"
    assert "ICEPURGE_TEMPORAL_ADDRESS" in found["temporal"][1]
    assert found["workers and codec"][0] == "skipped"


async def test_doctor_fails_while_no_worker_polls_the_bulk_queue(
    temporal_client: Client, stack: EmbeddedStack
) -> None:
    """A worker of a release before bulk queues polls the task queue only: namespace purges
    would wait on the bulk queue, and the doctor says so."""
    async with Worker(
        temporal_client,
        task_queue="doctor-half",
        workflows=[EchoWorkflow],
        workflow_runner=sandboxed_runner(),
    ):
        code, stdout, _ = await icepurge(stack, "doctor", "--json", ICEPURGE_TASK_QUEUE="doctor-half")
    assert code == 1
    outcome, detail = outcomes(stdout)["workers and codec"]
    assert outcome == "FAIL" and "'doctor-half-bulk'" in detail and "namespace and catalog purges" in detail
