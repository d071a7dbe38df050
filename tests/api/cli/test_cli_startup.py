"""What the `icepurge` CLI loads before it does anything: `--help` none of a command's modules,
`purge status` over the API no Temporal, Iceberg or Arrow, nor what httpx's own command line
needs (click, pygments, rich). A
module list, not a timing (this machine is shared): each module named here cost tens of
milliseconds of every start (`python -X importtime`, bench.make_run_start)."""

from __future__ import annotations

import json

from pyiceberg.catalog.sql import SqlCatalog

from icepurge.api.clients.temporal_client import PurgeClient
from tests.api_server import TOKENS
from tests.cli_runner import run_cli
from tests.purge_helpers import request_for
from tests.store import S3Store
from tests.tables import simple_table

NEVER_FOR_STATUS = ("temporalio", "pyiceberg", "pyarrow", "boto3", "fastapi", "click", "pygments", "rich")
NEVER_FOR_HELP = (*NEVER_FOR_STATUS, "pydantic", "httpx")


async def imported_by(env: dict[str, str], *args: str) -> tuple[int, str, set[str]]:
    """The CLI's exit code, stdout and every module it imported (`-X importtime` lists them)."""
    code, stdout, stderr = await run_cli(args, env, interpreter_flags=("-X", "importtime"))
    modules = {line.split("|")[2].strip() for line in stderr.splitlines() if line.startswith("import time:")}
    return code, stdout, modules


def loaded(modules: set[str], packages: tuple[str, ...]) -> list[str]:
    return sorted(name for name in modules if any(name == p or name.startswith(f"{p}.") for p in packages))


async def test_help_loads_no_command_module() -> None:
    code, stdout, modules = await imported_by({}, "--help")
    assert code == 0
    assert "purge" in stdout and "Usage:" in stdout
    assert "typer" in modules
    assert loaded(modules, NEVER_FOR_HELP) == []


async def test_status_over_the_api_loads_no_temporal_iceberg_or_arrow(
    api_url: str, catalog: SqlCatalog, purges: PurgeClient, s3: S3Store
) -> None:
    purge_id = await purges.start(request_for(simple_table(catalog, ("startup",), "status"), s3.properties))
    await purges.wait(purge_id)
    env = {"ICEPURGE_API_URL": api_url, "ICEPURGE_API_TOKEN": TOKENS["admin"][0]}
    code, stdout, modules = await imported_by(env, "purge", "status", purge_id)
    assert code == 0
    assert json.loads(stdout)["state"] == "SUCCEEDED"
    assert "httpx" in modules and "pydantic" in modules
    assert loaded(modules, NEVER_FOR_STATUS) == []
