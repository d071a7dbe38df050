"""The drop of a purge by name: only while the entry points at the planned metadata file, once.
In a SQL catalog the check and the drop are one conditional statement; elsewhere a load checks
first. Both ways give the same answers: TableChanged (nothing dropped) for a table committed to
since its plan, dropped for the planned one, already gone for a retried drop."""

from __future__ import annotations

from pathlib import Path

import pytest

from icepurge.catalogs.sql import SqlCatalogKind
from tests.catalog_drops import check_the_drop_takes_only_the_planned_entry_once


@pytest.mark.parametrize("conditional", [True, False], ids=["one statement", "load then drop"])
def test_a_drop_takes_only_the_planned_entry_and_only_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, conditional: bool
) -> None:
    if not conditional:
        monkeypatch.setattr(SqlCatalogKind, "drop_if_current", lambda *_: None)
    check_the_drop_takes_only_the_planned_entry_once(
        "shop", {"type": "sql", "uri": f"sqlite:///{tmp_path / 'c.sqlite'}", "warehouse": tmp_path.as_uri()}
    )
