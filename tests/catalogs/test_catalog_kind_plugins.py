"""A catalog kind from outside icepurge, plugged in by an entry point of the group
`icepurge.catalog_kinds` (an installed distribution's entry_points.txt): it serves the catalog
class it is named for, before icepurge's own kind of that class's base; a broken one says which
entry point to fix."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from pyiceberg.catalog.sql import SqlCatalog

from icepurge.catalogs import registry
from icepurge.catalogs.registry import ENTRY_POINT_GROUP, CatalogKindPluginError, kind_of
from icepurge.catalogs.sql import SqlCatalogKind

PLUGIN = '''
from pyiceberg.catalog.sql import SqlCatalog

from icepurge.catalogs.sql import SqlCatalogKind


class AuditedCatalog(SqlCatalog):
    """A company's own SQL catalog."""


class AuditedKind(SqlCatalogKind):
    """What icepurge asks of it, the company's way."""


NOT_A_KIND = object()
'''


class Site:
    """A directory on sys.path, as site-packages is: the plugin's module, and, once installed, a
    dist-info naming its entry point, as pip leaves one."""

    def __init__(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        self._tmp_path = tmp_path
        self._monkeypatch = monkeypatch
        self.directory = self._added("site")

    def _added(self, name: str) -> Path:
        directory = self._tmp_path / name
        directory.mkdir()
        (directory / "audited_catalogs.py").write_text(PLUGIN)
        self._monkeypatch.syspath_prepend(str(directory))
        return directory

    def install(self, entry: str) -> None:
        # A directory of its own: importlib.metadata keeps what it read of one already seen.
        directory = self._added("installed")
        info = directory / "audited_catalogs-1.0.dist-info"
        info.mkdir()
        (info / "METADATA").write_text("Metadata-Version: 2.1\nName: audited-catalogs\nVersion: 1.0\n")
        (info / "entry_points.txt").write_text(
            f"[{ENTRY_POINT_GROUP}]\naudited_catalogs.AuditedCatalog = {entry}\n"
        )
        # Entry points are read once a process, as a worker reads them at its first catalog.
        registry.plugged_kinds.cache_clear()

    def catalog(self) -> SqlCatalog:
        # Written by the test: importable only once its directory is on sys.path.
        plugin = importlib.import_module("audited_catalogs")
        catalog: SqlCatalog = plugin.AuditedCatalog(
            "audited", uri=f"sqlite:///{self._tmp_path / 'c.sqlite'}", warehouse=self._tmp_path.as_uri()
        )
        return catalog


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Site]:
    registry.plugged_kinds.cache_clear()
    yield Site(tmp_path, monkeypatch)
    registry.plugged_kinds.cache_clear()
    sys.modules.pop("audited_catalogs", None)


def _plain(site: Site) -> SqlCatalog:
    return SqlCatalog("plain", uri="sqlite://", warehouse=site.directory.as_uri())


def test_a_plugged_kind_serves_the_catalog_class_it_is_named_for(site: Site) -> None:
    assert type(kind_of(_plain(site))) is SqlCatalogKind
    site.install("audited_catalogs:AuditedKind")
    kind = kind_of(site.catalog())
    assert type(kind).__name__ == "AuditedKind" and isinstance(kind, SqlCatalogKind)
    # Any other SQL catalog keeps icepurge's own kind.
    assert type(kind_of(_plain(site))) is SqlCatalogKind


def test_without_the_plugin_the_subclass_gets_its_bases_kind(site: Site) -> None:
    assert type(kind_of(site.catalog())) is SqlCatalogKind


def test_a_plugged_entry_that_is_not_a_kind_says_which_to_fix(site: Site) -> None:
    site.install("audited_catalogs:NOT_A_KIND")
    with pytest.raises(CatalogKindPluginError, match=r"audited_catalogs:NOT_A_KIND .* is not a CatalogKind"):
        kind_of(site.catalog())
