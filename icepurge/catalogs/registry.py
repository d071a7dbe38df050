"""The one place a catalog's kind is chosen, as `stores/registry.py` chooses a store: by the
PyIceberg catalog's class, looked up by module and name so that a catalog's optional libraries
(Thrift for Hive, boto3 for Glue) are imported only where that catalog is configured. A new
catalog kind is a module with a `CatalogKind` subclass and one line here; any catalog not named
is served by the generic kind."""

from __future__ import annotations

from collections.abc import Callable
from typing import cast

from pyiceberg.catalog import Catalog

from icepurge.catalogs.kind import CatalogKind, RefusingCatalogKind


def _sql(catalog: Catalog) -> CatalogKind:
    from pyiceberg.catalog.sql import SqlCatalog

    from icepurge.catalogs.sql import SqlCatalogKind

    return SqlCatalogKind(cast(SqlCatalog, catalog))


KINDS: dict[tuple[str, str], Callable[[Catalog], CatalogKind]] = {
    ("pyiceberg.catalog.sql", "SqlCatalog"): _sql,
    ("pyiceberg.catalog.rest", "RestCatalog"): RefusingCatalogKind,
    ("pyiceberg.catalog.hive", "HiveCatalog"): RefusingCatalogKind,
}


def kind_of(catalog: Catalog) -> CatalogKind:
    """The kind that serves `catalog`: the one named for its class or the nearest base class
    (a subclass of the SQL catalog is still one), else the generic kind."""
    for cls in type(catalog).__mro__:
        make = KINDS.get((cls.__module__, cls.__qualname__))
        if make is not None:
            return make(catalog)
    return CatalogKind(catalog)
