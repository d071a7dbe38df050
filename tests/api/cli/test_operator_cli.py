"""The operator's CLI: over the HTTP API with nothing of Temporal's, every failure's reason in
every view, the report a page at a time, and one line (never a traceback) for a sealed payload
the command can't open."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest
from pyiceberg.catalog.sql import SqlCatalog
from temporalio.client import Client

from icepurge.api.clients.errors import PurgeFailedError, PurgeNotFoundError
from icepurge.api.clients.http_client import HttpPurgeClient
from icepurge.api.clients.temporal_client import PurgeClient
from icepurge.api.server.settings import ApiSettings
from icepurge.contract.purge_id import purge_id_for
from icepurge.contract.report_sections import ReportSection
from icepurge.contract.states import PurgeState
from icepurge.devstack.api_server import serve_api
from icepurge.devstack.s3_proxy import s3_proxy, through_proxy
from icepurge.devstack.stack import EmbeddedStack
from tests.api_server import TOKENS, bearer, token_env
from tests.cli_runner import icepurge, icepurge_over_api
from tests.purge_helpers import eventually, request_for
from tests.store import S3Store
from tests.tables import simple_table

SEALED = b"binary/encrypted"


async def test_the_cli_goes_through_the_api_with_neither_temporal_nor_the_codec_key(
    catalog: SqlCatalog,
    api_url: str,
    temporal_client: Client,
    s3: S3Store,
    tmp_path: Path,
) -> None:
    table = simple_table(catalog, ("operator",), "over_api")
    request_file = tmp_path / "request.json"
    request_file.write_text(request_for(table, s3.properties).model_dump_json())
    env = token_env(tmp_path)

    code, stdout, stderr = await icepurge_over_api(api_url, "purge", "start", str(request_file), **env)
    assert code == 0, stderr
    purge_id = stdout.strip()
    code, stdout, stderr = await icepurge_over_api(
        api_url, "purge", "watch", purge_id, "--interval", "0.2", **env
    )
    assert code == 0, stderr
    assert stdout.startswith("SUCCEEDED: ")
    assert "Traceback" not in stderr
    code, stdout, stderr = await icepurge_over_api(api_url, "purge", "status", purge_id, **env)
    assert code == 0, stderr
    assert json.loads(stdout)["state"] == "SUCCEEDED"
    assert s3.properties["s3.secret-access-key"] not in stdout
    assert s3.list(table.location()) == set()
    code, stdout, stderr = await icepurge_over_api(api_url, "purge", "start", str(request_file), **env)
    assert (code, stdout.strip()) == (0, purge_id)
    assert f"purge {purge_id} already SUCCEEDED for this request; this start changed nothing" in stderr

    # The API sealed the request, credentials included, like everything the workers write.
    history = temporal_client.get_workflow_handle(purge_id).fetch_history_events()
    started = await anext(aiter(history))
    payload = started.workflow_execution_started_event_attributes.input.payloads[0]
    assert payload.metadata["encoding"] == SEALED
    assert s3.properties["s3.secret-access-key"].encode() not in payload.data

    code, _, stderr = await icepurge_over_api(api_url, "purge", "status", purge_id)
    assert code == 2
    assert "ICEPURGE_API_TOKEN" in stderr
    assert len(stderr.strip().splitlines()) == 1


async def test_direct_mode_without_the_codec_key_says_what_to_set_in_one_line(
    catalog: SqlCatalog, purges: PurgeClient, s3: S3Store, stack: EmbeddedStack, tmp_path: Path
) -> None:
    table = simple_table(catalog, ("operator",), "sealed", appends=1)
    request = request_for(table, s3.properties)
    purge_id = await purges.start(request)
    await purges.wait(purge_id)

    no_key = {"ICEPURGE_CODEC_KEYS": "{}"}
    for command in (("purge", "status", purge_id), ("purge", "watch", purge_id)):
        code, _, stderr = await icepurge(stack, *command, **no_key)
        assert code == 2, stderr
        assert "Traceback" not in stderr
        assert "unencrypted" not in stderr
        # watch's bar may have drawn its first frame above: the error is the last line, whole.
        assert "ICEPURGE_CODEC_KEYS as on the workers" in stderr.strip().splitlines()[-1]

    other = simple_table(catalog, ("operator",), "plaintext", appends=1)
    request_file = tmp_path / "request.json"
    request_file.write_text(request_for(other, s3.properties).model_dump_json())
    code, _, stderr = await icepurge(stack, "purge", "start", str(request_file), **no_key)
    assert code == 2
    assert "unsealed" in stderr
    assert "ICEPURGE_CODEC_KEYS" in stderr
    with pytest.raises(PurgeNotFoundError):
        await purges.status(purge_id_for(request_for(other, s3.properties)))


async def test_a_failed_purge_says_why_in_watch_status_list_report_and_the_api(
    catalog: SqlCatalog, api_url: str, s3: S3Store, tmp_path: Path
) -> None:
    table = simple_table(catalog, ("operator",), "vanished", appends=1)
    request = request_for(table, s3.properties)
    missing = request.model_copy(
        update={"metadata_location": table.metadata_location.replace(".metadata.json", "-gone.metadata.json")}
    )
    env = token_env(tmp_path)
    async with HttpPurgeClient(api_url, TOKENS["admin"][0]) as client:
        purge_id = await client.start(missing)
        code, stdout, stderr = await icepurge_over_api(api_url, "purge", "watch", purge_id, **env)
        assert code == 4
        assert stdout.startswith("FAILED: MetadataNotFound: ")
        assert "gone.metadata.json" in stdout

        code, stdout, _ = await icepurge_over_api(api_url, "purge", "status", purge_id, **env)
        assert json.loads(stdout)["error_type"] == "MetadataNotFound"

        async def listed() -> list[dict[str, str]]:
            async with httpx.AsyncClient() as http:
                answer = await http.get(
                    f"{api_url}/v1/purges", params={"table": table.name()[-1]}, headers=bearer("admin")
                )
            items: list[dict[str, str]] = answer.json()["items"]
            return [item for item in items if item["purge_id"] == purge_id]

        found = await eventually(listed, lambda items: bool(items) and items[0]["state"] == "FAILED")
        item = found[0]
        assert item["error"].startswith("MetadataNotFound: ")
        assert item["reason"] == item["error"]

        code, stdout, _ = await icepurge_over_api(
            api_url, "purge", "list", "--table", table.name()[-1], **env
        )
        assert code == 0
        row = next(line for line in stdout.splitlines() if purge_id in line)
        assert "MetadataNotFound" in row

        code, _, stderr = await icepurge_over_api(api_url, "purge", "report", purge_id, **env)
        assert code == 2
        assert "has no report: it ended FAILED before writing one (MetadataNotFound" in stderr
        assert "MetadataNotFound: MetadataNotFound" not in stderr


async def test_the_report_pages_through_failures_and_a_dry_runs_would_delete_list(
    catalog: SqlCatalog, api_url: str, s3: S3Store, stack: EmbeddedStack, tmp_path: Path
) -> None:
    table = simple_table(catalog, ("operator",), "reported", appends=4)
    planted = s3.list(table.location())
    env = token_env(tmp_path)
    async with HttpPurgeClient(api_url, TOKENS["admin"][0]) as client:
        dry = await client.start(request_for(table, s3.properties, dry_run=True))
        report = await client.wait(dry)
        paged: list[str] = []
        offset: int | None = 0
        while offset is not None:
            page = await client.report(dry, offset=offset, limit=3)
            assert page.section is ReportSection.WOULD_DELETE
            assert len(page.entries) <= 3
            paged += [entry.path for entry in page.entries]
            offset = page.next_offset
        assert len(paged) == len(set(paged)) == report.status.files_total
        assert set(paged) == planted

        code, stdout, stderr = await icepurge_over_api(
            api_url, "purge", "report", dry, "--limit", "2", "--all", **env
        )
        assert code == 0, stderr
        assert [line.split("\t")[0] for line in stdout.splitlines()] == paged
        code, stdout, stderr = await icepurge_over_api(api_url, "purge", "report", dry, "--limit", "2", **env)
        assert len(stdout.splitlines()) == 2
        assert "more: --offset 2" in stderr

        stuck = sorted(task.file.file_path for task in table.scan().plan_files())[0]
        with s3_proxy(stack.ports.s3) as (port, faults):
            faults.fail_keys_containing = stuck.rsplit("/", 1)[1]
            failing = await client.start(request_for(table, through_proxy(s3.properties, port)))
            final = await client.wait(failing)
        assert final.status.state is PurgeState.SUCCEEDED_WITH_ERRORS
        page = await client.report(failing)
        assert page.section is ReportSection.FAILURES
        assert stuck in {entry.path for entry in page.entries}
        assert all(entry.detail and "SlowDown" in entry.detail for entry in page.entries)
        assert len(page.entries) == final.status.failures_total

        code, stdout, stderr = await icepurge_over_api(api_url, "purge", "watch", failing, **env)
        assert code == 3
        assert f"{final.status.failures_total} failed (first: " in stdout
        assert f"icepurge purge report {failing}" in stdout

        code, stdout, _ = await icepurge_over_api(api_url, "purge", "list", "--table", "reported", **env)
        row = next(line for line in stdout.splitlines() if failing in line)
        assert "files failed" in row


async def test_an_api_without_the_codec_key_names_the_setting_in_one_line(
    catalog: SqlCatalog, purges: PurgeClient, s3: S3Store, api_settings: ApiSettings, tmp_path: Path
) -> None:
    table = simple_table(catalog, ("operator",), "keyless_api", appends=1)
    purge_id = await purges.start(request_for(table, s3.properties))
    await purges.wait(purge_id)
    with serve_api(api_settings.model_copy(update={"codec_keys": {}})) as keyless:
        answer = httpx.get(f"{keyless}/v1/purges/{purge_id}", headers=bearer("admin"))
        code, _, stderr = await icepurge_over_api(keyless, "purge", "status", purge_id, **token_env(tmp_path))
    assert answer.status_code == 500
    assert "ICEPURGE_CODEC_KEYS on the API" in answer.json()["detail"]
    assert code == 2
    assert "ICEPURGE_CODEC_KEYS on the API" in stderr
    assert len(stderr.strip().splitlines()) == 1


async def test_direct_mode_reads_reports_from_the_state_location(
    catalog: SqlCatalog, purges: PurgeClient, s3: S3Store, stack: EmbeddedStack
) -> None:
    table = simple_table(catalog, ("operator",), "direct_report", appends=1)
    dry = await purges.start(request_for(table, s3.properties, dry_run=True))
    files = (await purges.wait(dry)).status.files_total
    missing = request_for(table, s3.properties).model_copy(
        update={"metadata_location": table.metadata_location.replace(".metadata.json", "-x.metadata.json")}
    )
    failed = await purges.start(missing)
    with pytest.raises(PurgeFailedError):
        await purges.wait(failed)
    state = {
        key: value
        for key, value in stack.worker_env().items()
        if key in ("ICEPURGE_STATE_LOCATION", "ICEPURGE_STATE_IO_PROPERTIES")
    }
    code, stdout, stderr = await icepurge(stack, "purge", "report", dry, **state)
    assert code == 0, stderr
    assert len(stdout.splitlines()) == files
    code, _, stderr = await icepurge(stack, "purge", "report", failed, **state)
    assert code == 2
    assert "Traceback" not in stderr
    assert "has no report: it ended FAILED" in stderr
    code, _, stderr = await icepurge(stack, "purge", "report", dry)
    assert code == 2
    assert "set ICEPURGE_STATE_LOCATION" in stderr
