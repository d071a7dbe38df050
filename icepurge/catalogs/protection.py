"""Protection: a table or any namespace level above it that says `icepurge.protected=true` is
never dropped or purged by name."""

from __future__ import annotations

from pyiceberg.exceptions import NoSuchNamespaceError

from icepurge.catalogs.kind import CatalogKind
from icepurge.contract.names import PROTECTED_PROPERTY


def protected(properties: dict[str, str]) -> bool:
    return properties.get(PROTECTED_PROPERTY, "").strip().lower() == "true"


def protected_ancestor(kind: CatalogKind, levels: list[str]) -> tuple[str | None, int]:
    """The innermost namespace level that says it is protected, if any, and the catalog calls
    it took to find out."""
    for calls, depth in enumerate(range(len(levels), 0, -1), start=1):
        namespace = tuple(levels[:depth])
        try:
            properties = kind.namespace_properties(namespace)
        except NoSuchNamespaceError:
            # Catalogs that hold nested namespaces flat have no entry for a parent level.
            continue
        if protected(properties):
            return f"namespace {'.'.join(namespace)}", calls
    return None, len(levels)
