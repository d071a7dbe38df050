"""The `icepurge` CLI against the real stack: start, status, watch, and refusals."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from pyiceberg.catalog.sql import SqlCatalog

from icepurge.api.clients.temporal_client import PurgeClient
from icepurge.devstack.stack import EmbeddedStack
from tests.cli_runner import icepurge
from tests.purge_helpers import request_for
from tests.store import S3Store
from tests.tables import simple_table


async def test_start_watch_and_status_through_the_cli(
    catalog: SqlCatalog, purges: PurgeClient, s3: S3Store, stack: EmbeddedStack, tmp_path: Path
) -> None:
    table = simple_table(catalog, ("cli",), "watched")
    request_file = tmp_path / "request.json"
    request_file.write_text(request_for(table, s3.properties).model_dump_json())

    code, stdout, stderr = await icepurge(stack, "purge", "start", str(request_file))
    assert code == 0, stderr
    purge_id = stdout.strip()

    code, stdout, stderr = await icepurge(stack, "purge", "watch", purge_id, "--interval", "0.2")
    assert code == 0, stderr
    # The result on stdout, the bar on stderr: `watch ID > file` keeps the outcome.
    assert stdout.startswith("SUCCEEDED: ") and stdout.count("\n") == 1, stdout
    assert "SUCCEEDED: " not in stderr and "SUCCEEDED" in stderr

    code, stdout, _ = await icepurge(stack, "purge", "status", purge_id)
    assert code == 0
    status = json.loads(stdout)
    assert status["state"] == "SUCCEEDED"
    assert s3.properties["s3.secret-access-key"] not in stdout
    assert s3.list(table.location()) == set()


async def test_short_lived_cli_commands_exit_cleanly(
    purges: PurgeClient, s3: S3Store, stack: EmbeddedStack, tmp_path: Path
) -> None:
    """Regression: one `purge start` in about fifteen died in interpreter finalization
    (SIGABRT/SIGSEGV from the Temporal client's native threads)."""
    request_file = tmp_path / "request.json"
    document = {
        "catalog": "tests",
        "namespace": ["cli"],
        "table": "exit",
        "metadata_location": "s3://warehouse/tests/cli/exit/metadata/00000-none.metadata.json",
        "file_io_properties": s3.properties,
        "requested_by": "pytest",
    }
    request_file.write_text(json.dumps(document))
    codes = [(await icepurge(stack, "purge", "start", str(request_file)))[0] for _ in range(30)]
    assert codes == [0] * 30


async def test_cli_refuses_a_malformed_request_naming_the_field(
    purges: PurgeClient, stack: EmbeddedStack, tmp_path: Path
) -> None:
    request_file = tmp_path / "bad.json"
    request_file.write_text(json.dumps({"catalog": "c", "namespace": "flat", "table": "t"}))
    code, _, stderr = await icepurge(stack, "purge", "start", str(request_file))
    assert code == 2
    assert "namespace" in stderr
    assert "requested_by" in stderr


async def test_cli_status_of_an_unknown_purge_says_so(purges: PurgeClient, stack: EmbeddedStack) -> None:
    code, _, stderr = await icepurge(stack, "purge", "status", "icepurge-does-not-exist")
    assert code == 2
    assert "no purge with id" in stderr


async def test_list_and_cancel_through_the_cli(
    catalog: SqlCatalog, purges: PurgeClient, s3: S3Store, stack: EmbeddedStack
) -> None:
    table = simple_table(catalog, ("cli", "nested level"), "listed", appends=1)
    purge_id = await purges.start(request_for(table, s3.properties))
    await purges.wait(purge_id)
    for _ in range(50):
        code, stdout, stderr = await icepurge(
            stack,
            "purge",
            "list",
            "--state",
            "SUCCEEDED",
            "--namespace",
            "cli",
            "--namespace",
            "nested level",
        )
        assert code == 0, stderr
        if purge_id in stdout:
            break
        await asyncio.sleep(0.2)
    assert purge_id in stdout
    assert "tests.cli.nested level.listed" in stdout

    code, _, stderr = await icepurge(stack, "purge", "cancel", "icepurge-" + "0" * 32)
    assert code == 2
    assert "no purge" in stderr
    # Waited for to its result, so its run has closed: nothing is left to cancel, and the CLI says so.
    code, stdout, stderr = await icepurge(stack, "purge", "cancel", purge_id)
    assert code == 2
    assert "has already finished (SUCCEEDED)" in stderr
    assert "cancel requested" not in stdout
