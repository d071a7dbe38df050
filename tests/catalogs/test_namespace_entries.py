"""A catalog type that can't list every entry it holds (views, other engines' tables: AWS Glue
lists its Iceberg tables only, and drops a database with all of them) never has a namespace
dropped by a namespace purge, in a real run or a preview: the reason says why."""

from __future__ import annotations

from pyiceberg.catalog.noop import NoopCatalog
from pyiceberg.typedef import Identifier

from icepurge.catalogs.namespace_drops import DropPreview, drop_if_empty


class OpaqueCatalog(NoopCatalog):
    """Stands in for such a catalog: an empty namespace, as far as it lists."""

    def list_tables(self, namespace: str | Identifier) -> list[Identifier]:
        return []

    def list_namespaces(self, namespace: str | Identifier = ()) -> list[Identifier]:
        return []

    def drop_namespace(self, namespace: str | Identifier) -> None:
        raise AssertionError(f"{namespace} was dropped")


def test_a_catalog_that_cant_list_every_entry_keeps_its_namespaces() -> None:
    catalog = OpaqueCatalog("opaque")
    for preview in (None, DropPreview(purged=frozenset())):
        reason = drop_if_empty(catalog, "opaque", ("ns",), preview)
        assert reason is not None
        assert reason.startswith("kept: a OpaqueCatalog can't list every entry it holds")
