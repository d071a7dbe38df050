"""A namespace tree's shape as a walk asks it: each namespace's direct children, and its
properties (whether it is protected). Any catalog answers a call at a time; a kind that can read
every namespace of the catalog at once (the SQL catalog: two queries, where its `list_namespaces`
and `load_namespace_properties` scan its tables on every call) answers from what it read."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

from pyiceberg.catalog import Catalog
from pyiceberg.exceptions import NoSuchNamespaceError
from pyiceberg.typedef import Identifier


def children(catalog: Catalog, namespace: Identifier) -> list[Identifier]:
    try:
        found = catalog.list_namespaces(namespace)
    except NoSuchNamespaceError:
        return []
    return direct_children(namespace, found)


def direct_children(namespace: Identifier, found: Iterable[Identifier]) -> list[Identifier]:
    """Some catalogs answer with every descendant: the direct children, in a stable order."""
    depth = len(namespace) + 1
    return sorted(
        {
            tuple(child[:depth])
            for child in found
            if len(child) >= depth and tuple(child[: depth - 1]) == namespace
        }
    )


class NamespaceLister:
    def __init__(self, catalog: Catalog) -> None:
        self._catalog = catalog

    def children(self, namespace: Identifier) -> list[Identifier]:
        return children(self._catalog, namespace)

    def properties(self, namespace: Identifier) -> dict[str, str]:
        try:
            return self._catalog.load_namespace_properties(namespace)
        except NoSuchNamespaceError:
            return {}


class KnownNamespaces(NamespaceLister):
    """Every namespace of the catalog and their properties, read once when the walk began: a
    namespace created during the walk is not walked, as one created just after it would not be."""

    def __init__(
        self, catalog: Catalog, namespaces: Iterable[Identifier], properties: dict[Identifier, dict[str, str]]
    ) -> None:
        super().__init__(catalog)
        self._children: defaultdict[Identifier, set[Identifier]] = defaultdict(set)
        for namespace in namespaces:
            for depth in range(1, len(namespace) + 1):
                self._children[namespace[: depth - 1]].add(namespace[:depth])
        self._properties = properties

    def children(self, namespace: Identifier) -> list[Identifier]:
        return sorted(self._children.get(namespace, ()))

    def properties(self, namespace: Identifier) -> dict[str, str]:
        return self._properties.get(namespace, {})
