"""The SQL catalog's namespace tree read at once answers a walk exactly as PyIceberg's calls one
namespace at a time do: the same children at every level (nested levels held flat, a dotted
level, intermediate levels with no entry of their own) and the same properties."""

from __future__ import annotations

from pathlib import Path

from pyiceberg.catalog.sql import SqlCatalog
from pyiceberg.typedef import Identifier

from icepurge.catalogs.namespace_listing import NamespaceLister
from icepurge.catalogs.registry import kind_of
from icepurge.contract.names import PROTECTED_PROPERTY
from tests.tables import simple_table


def _walked(lister: NamespaceLister) -> dict[Identifier, tuple[list[Identifier], dict[str, str]]]:
    seen: dict[Identifier, tuple[list[Identifier], dict[str, str]]] = {}
    pending: list[Identifier] = [()]
    while pending:
        namespace = pending.pop()
        found = lister.children(namespace)
        seen[namespace] = (found, lister.properties(namespace) if namespace else {})
        pending += found
    return seen


def test_the_sql_catalogs_tree_read_at_once_is_the_tree_read_a_namespace_at_a_time(tmp_path: Path) -> None:
    catalog = SqlCatalog("walk", uri=f"sqlite:///{tmp_path}/c.db", warehouse=f"file://{tmp_path}/w")
    catalog.create_namespace(("a",), {"owner": "me"})
    catalog.create_namespace(("a", "keep"), {PROTECTED_PROPERTY: "true"})
    simple_table(catalog, ("a", "b", "c"), "t", appends=0)
    simple_table(catalog, ("a", "v1.2"), "t", appends=0)
    simple_table(catalog, ("z",), "t", appends=0)
    catalog.create_namespace(("empty",))
    at_once = kind_of(catalog).namespace_lister()
    assert type(at_once) is not NamespaceLister
    one_at_a_time = _walked(NamespaceLister(catalog))
    assert _walked(at_once) == one_at_a_time
    assert one_at_a_time[("a",)] == ([("a", "b"), ("a", "keep"), ("a", "v1")], {"owner": "me"})
    assert one_at_a_time[("a", "keep")][1][PROTECTED_PROPERTY] == "true"
