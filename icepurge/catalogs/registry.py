"""The one place a catalog's kind is chosen, as the store registry chooses a store: by the
PyIceberg catalog's class, looked up by module and name so that a catalog's optional libraries
(Thrift for Hive, boto3 for Glue) are imported only where that catalog is configured. A new
catalog kind is a module with a `CatalogKind` subclass and one line here, or, outside icepurge, an
entry point in the group `icepurge.catalog_kinds` (as PyIceberg's `py-catalog-impl` names a
catalog class): named for the catalog class it serves (`module.Class`), its value the kind
(`package.module:KindClass`). Any catalog not named is served by the generic kind."""

from __future__ import annotations

import functools
from collections.abc import Callable
from importlib.metadata import EntryPoint, entry_points
from typing import cast

from pyiceberg.catalog import Catalog

from icepurge.catalogs.kind import CatalogKind, RefusingCatalogKind

ENTRY_POINT_GROUP = "icepurge.catalog_kinds"


class CatalogKindPluginError(RuntimeError):
    """An entry point of the group names a kind that can't be loaded, or isn't a kind."""


def _sql(catalog: Catalog) -> CatalogKind:
    from pyiceberg.catalog.sql import SqlCatalog

    from icepurge.catalogs.sql import SqlCatalogKind

    return SqlCatalogKind(cast(SqlCatalog, catalog))


KINDS: dict[tuple[str, str], Callable[[Catalog], CatalogKind]] = {
    ("pyiceberg.catalog.sql", "SqlCatalog"): _sql,
    ("pyiceberg.catalog.rest", "RestCatalog"): RefusingCatalogKind,
    ("pyiceberg.catalog.hive", "HiveCatalog"): RefusingCatalogKind,
}


@functools.cache
def plugged_kinds() -> dict[tuple[str, str], EntryPoint]:
    """The installed distributions' kinds, by the catalog class each serves; loaded when used."""
    kinds: dict[tuple[str, str], EntryPoint] = {}
    for found in entry_points(group=ENTRY_POINT_GROUP):
        module, _, name = found.name.rpartition(".")
        kinds[(module, name)] = found
    return kinds


def kind_of(catalog: Catalog) -> CatalogKind:
    """The kind that serves `catalog`: the one named for its class or the nearest base class
    (a subclass of the SQL catalog is still one), a plugged-in kind before icepurge's own, else
    the generic kind."""
    plugged = plugged_kinds()
    for cls in type(catalog).__mro__:
        key = (cls.__module__, cls.__qualname__)
        if key in plugged:
            return _load(plugged[key])(catalog)
        make = KINDS.get(key)
        if make is not None:
            return make(catalog)
    return CatalogKind(catalog)


def _load(plugged: EntryPoint) -> Callable[[Catalog], CatalogKind]:
    where = f"entry point {plugged.name} = {plugged.value} (group {ENTRY_POINT_GROUP})"
    try:
        kind = plugged.load()
    except Exception as error:
        raise CatalogKindPluginError(
            f"{where} can't be loaded ({type(error).__name__}: {error}): fix or uninstall its distribution"
        ) from None
    if not (isinstance(kind, type) and issubclass(kind, CatalogKind)):
        raise CatalogKindPluginError(f"{where} is not a CatalogKind subclass: point it at one")
    return cast(Callable[[Catalog], CatalogKind], kind)
