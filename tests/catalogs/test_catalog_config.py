"""Catalogs by name from PyIceberg's own configuration; their properties never leave: not in
listings, not in error messages, not in the FileIO properties a purge carries."""

from __future__ import annotations

from pathlib import Path

import pytest
import typer
from temporalio.exceptions import ApplicationError
from temporalio.testing import ActivityEnvironment

from icepurge.activities.catalog.catalog_activities import CatalogActivities
from icepurge.activities.catalog.table_catalog import TableCatalog
from icepurge.api.cli.common import namespace_levels
from icepurge.catalogs.admission import CatalogAdmission
from icepurge.catalogs.configured import REDACTED, CatalogRegistry
from icepurge.catalogs.io_properties import file_io_properties
from icepurge.catalogs.live_tables import FootprintCache, LiveTableScanner
from icepurge.contract.catalog_steps import TableRef
from icepurge.contract.names import ERROR_CATALOG_UNAVAILABLE
from icepurge.devstack.catalog_env import pyiceberg_catalog_env

SECRET = "hunter2-very-secret"
AZURE_KEY = "azure-account-key-value"


def test_catalogs_configured_by_environment_variables_are_known_by_name(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    properties = {
        "type": "rest",
        "uri": f"https://svc:{SECRET}@catalog.example/api",
        "credential": f"client:{SECRET}",
        "s3.secret-access-key": SECRET,
        "s3.endpoint": "http://127.0.0.1:1",
        "adls.account-key": AZURE_KEY,
        "adls.connection-string": f"AccountName=a;AccountKey={AZURE_KEY}x",
    }
    for key, value in pyiceberg_catalog_env("unitcat", properties).items():
        monkeypatch.setenv(key, value)
    registry = CatalogRegistry.from_pyiceberg_config()
    assert registry.knows("unitcat") and registry.knows("UnitCat")
    assert "unitcat" in registry.names()
    message = f"403 from https://svc:{SECRET}@catalog.example for client:{SECRET}"
    azure = f"no access with {AZURE_KEY} (AccountName=a;AccountKey={AZURE_KEY}x)"
    assert SECRET not in registry.redact(message)
    assert AZURE_KEY not in registry.redact(azure)
    assert REDACTED in registry.redact(message)


def test_a_loaded_tables_file_io_properties_keep_the_store_settings_only() -> None:
    loaded = {
        "uri": "http://catalog",
        "credential": "client:secret",
        "rest.sigv4-enabled": "true",
        "warehouse": "s3://w/",
        "s3.endpoint": "http://store",
        "s3.access-key-id": "vended-key",
        "s3.session-token": "vended-token",
        "auth.manager": object(),
    }
    assert file_io_properties(loaded) == {
        "s3.endpoint": "http://store",
        "s3.access-key-id": "vended-key",
        "s3.session-token": "vended-token",
    }


@pytest.mark.parametrize(
    ("text", "levels"),
    [("a", ["a"]), ("a.b.c", ["a", "b", "c"]), ('["a.b", "c"]', ["a.b", "c"]), ('["x"]', ["x"])],
)
def test_namespace_levels_on_the_command_line(text: str, levels: list[str]) -> None:
    assert namespace_levels(text) == levels


@pytest.mark.parametrize("text", ['["a", 1]', "[not json", "[]", "a..b", '["a", ""]'])
def test_malformed_namespace_levels_are_refused(text: str) -> None:
    with pytest.raises(typer.BadParameter):
        namespace_levels(text)


def test_a_failing_catalog_is_retried_with_its_credentials_redacted(tmp_path: Path) -> None:
    leaky = {
        "py-catalog-impl": "tests.leaky_catalog.LeakyCatalog",
        "uri": f"sqlite:///{tmp_path / 'catalog.db'}",
        "credential": f"client:{SECRET}",
    }
    admission = CatalogAdmission(CatalogRegistry({"leaky": leaky}), [])
    activities = CatalogActivities(TableCatalog(admission, LiveTableScanner(FootprintCache(0), 1)))
    ref = TableRef(purge_id="p", catalog="leaky", namespace=["a"], table="t")
    with pytest.raises(ApplicationError) as failed:
        ActivityEnvironment().run(activities.load_table, ref)
    assert failed.value.type == ERROR_CATALOG_UNAVAILABLE
    assert not failed.value.non_retryable
    assert failed.value.message.startswith("catalog call failed, retrying: PermissionError: 403")
    assert SECRET not in failed.value.message
    assert REDACTED in failed.value.message
    assert failed.value.__cause__ is None
