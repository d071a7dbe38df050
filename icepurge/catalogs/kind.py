"""What icepurge asks of a catalog, and how a catalog kind says what it can do. `CatalogKind`
serves any catalog through PyIceberg's generic `Catalog` (REST, Hive, Glue, DynamoDB, S3 Tables,
…); a kind whose catalog can do better (the SQL catalog: a conditional drop in one statement, a
listing with each table's metadata file, every row of a namespace whoever wrote it) overrides the
methods concerned (icepurge/catalogs/sql.py). `registry.kind_of` picks the kind."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from pyiceberg.catalog import Catalog
from pyiceberg.exceptions import NoSuchNamespaceError
from pyiceberg.table import Table
from pyiceberg.typedef import Identifier

from icepurge.catalogs.entries import VIEW, Entry, NamespaceEntries
from icepurge.catalogs.namespace_listing import NamespaceLister


@dataclass(frozen=True)
class Capabilities:
    """What callers and the generic methods decide on; what a kind does better it says by
    overriding the method (`drop_if_current`, `tables_with_metadata`, `namespace_entries`)."""

    # A plain drop leaves the table's files in place (no need to look whether they went).
    keeps_storage_on_drop: bool = False
    # Refuses to drop a namespace that holds anything (views, other engines' entries).
    refuses_non_empty_drop: bool = False
    # Keeps a nested namespace as its levels joined by dots, and lists it split at every dot.
    dotted_namespaces: bool = False


class CatalogKind:
    capabilities = Capabilities()

    def __init__(self, catalog: Catalog) -> None:
        self.catalog = catalog

    @property
    def name(self) -> str:
        return type(self.catalog).__name__

    def load(self, identifier: Identifier) -> Table:
        return self.catalog.load_table(identifier)

    def drop(self, identifier: Identifier) -> None:
        self.catalog.drop_table(identifier)

    def drop_if_current(self, identifier: Identifier, metadata_location: str) -> bool | None:
        """True: dropped. False: no entry of that name points at that file (gone, or changed).
        None: this kind can't drop on that condition in one call; load and drop instead."""
        return None

    def register(self, identifier: Identifier, metadata_location: str) -> None:
        self.catalog.register_table(identifier, metadata_location)

    def rename(self, source: Identifier, target: Identifier) -> None:
        self.catalog.rename_table(source, target)

    def namespace_exists(self, namespace: Identifier) -> bool:
        return self.catalog.namespace_exists(namespace)

    def namespace_properties(self, namespace: Identifier) -> dict[str, str]:
        """Raises NoSuchNamespaceError."""
        return dict(self.catalog.load_namespace_properties(namespace))

    def tables_with_metadata(self, namespace: Identifier) -> dict[Identifier, str | None]:
        """The tables of `namespace`, each with its current metadata file where the listing says
        it (None where it doesn't): what the live-table guard reads footprints from."""
        return dict.fromkeys((tuple(one) for one in self.catalog.list_tables(namespace)), None)

    def spelled_as_listed(self, levels: Sequence[str]) -> Identifier:
        """The namespace as the catalog lists it."""
        if levels and self.capabilities.dotted_namespaces:
            return Catalog.identifier_to_tuple(".".join(levels))
        return tuple(levels)

    def namespace_lister(self) -> NamespaceLister:
        """Answers a walk's questions about the namespace tree's shape."""
        return NamespaceLister(self.catalog)

    def namespace_entries(self, namespace: Identifier) -> NamespaceEntries:
        """Everything in `namespace` itself (not its nested namespaces); empty when it is gone."""
        if not namespace:
            return NamespaceEntries()
        try:
            tables = sorted(self.catalog.list_tables(namespace))
        except NoSuchNamespaceError:
            return NamespaceEntries()
        try:
            views = sorted(self.catalog.list_views(namespace))
        except NoSuchNamespaceError:
            return NamespaceEntries()
        except NotImplementedError:
            views = []
        unknowable = None
        if not self.capabilities.refuses_non_empty_drop:
            unknowable = (
                f"a {self.name} can't list every entry it holds (views, other engines' tables), "
                "and may drop them with the namespace; drop the namespace yourself once it is empty"
            )
        return NamespaceEntries(tables, [Entry(view, VIEW) for view in views], unknowable)


class RefusingCatalogKind(CatalogKind):
    """REST and Hive catalogs: their server refuses to drop a namespace that holds anything,
    whatever PyIceberg lists."""

    capabilities = Capabilities(refuses_non_empty_drop=True)
