"""`icepurge doctor`: every check in one table, each failure with its fix; exit 0 only when all
pass (a check skipped because its part is not configured here passes)."""

from __future__ import annotations

import sys

import typer
from rich.console import Console
from rich.table import Table
from rich.text import Text

from icepurge.api.cli.common import console, say
from icepurge.api.cli.settings import CliSettings
from icepurge.api.clients.errors import PurgeAccessDeniedError, PurgeServiceUnavailableError
from icepurge.api.clients.http_client import HttpPurgeClient
from icepurge.api.server.doctor_checks import server_checks
from icepurge.api.server.settings import ApiSettings
from icepurge.catalogs.configured import CatalogRegistry
from icepurge.contract.doctor import CheckResult, DoctorReport, fail, ok, skipped

_STYLES = {"ok": "green", "FAIL": "bold red", "skipped": "yellow"}


async def _api_checks(client: HttpPurgeClient, url: str) -> list[CheckResult]:
    try:
        await client.ready()
    except PurgeServiceUnavailableError as error:
        return [fail("api", f"{error}")]
    try:
        token = await client.token_info()
    except PurgeAccessDeniedError as error:
        return [ok("api", f"{url} answers and reaches Temporal"), fail("token", str(error))]
    roles = ", ".join(role.value for role in token.roles) or "none"
    catalogs = ", ".join(token.catalogs) or "none"
    return [
        ok("api", f"{url} answers and reaches Temporal"),
        ok("token", f"{token.name!r}: roles {roles}; catalogs {catalogs}"),
    ]


async def run_checks(settings: CliSettings) -> list[CheckResult]:
    async with HttpPurgeClient(settings.api_url, settings.token()) as client:
        results = await _api_checks(client, settings.api_url)
        if settings.cli_direct:
            return results + await server_checks(ApiSettings(), CatalogRegistry.from_pyiceberg_config())
        if any(result.failed for result in results):
            return [*results, skipped("the rest", "needs the API and a token, or --direct")]
        try:
            report = await client.doctor()
        except (PurgeAccessDeniedError, PurgeServiceUnavailableError) as error:
            return [*results, fail("the rest", f"the API's checks: {error}")]
        return results + report.checks


def print_results(results: list[CheckResult], *, as_json: bool) -> None:
    if as_json:
        print(DoctorReport(checks=results).model_dump_json(indent=2))
    else:
        table = Table("check", "outcome", "detail / fix")
        for result in results:
            outcome = Text(result.outcome, style=_STYLES[result.outcome])
            table.add_row(result.check, outcome, Text(result.detail))
        Console(width=None if sys.stdout.isatty() else 200).print(table)
    failed = [result.check for result in results if result.failed]
    summary = f"{len(failed)} failed: {', '.join(failed)}" if failed else "all checks passed"
    # With --json the document is the result, and stays parseable.
    if as_json:
        console().print(summary, markup=False, highlight=False)
    else:
        say(summary)
    if failed:
        raise typer.Exit(1)
