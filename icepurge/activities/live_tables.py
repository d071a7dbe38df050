"""The live-table guard: before a purge's first delete, is any table the catalog still holds using
the purged metadata, or locations overlapping the purged table's (equal, parent or child)? A
table dropped and re-created at the same place, or registered again from the same metadata,
would lose its files to the purge.

Its cost is bounded: one listing per namespace in scope, table loads on a bounded pool, and the
other tables' locations cached per worker (the identifier's own table is always loaded afresh).
Where the catalog's listing says each table's current metadata file (the SQL catalog: one query
per namespace), a footprint is kept by that file, which never changes: a namespace purge's guards
read each other table's metadata once, not once per purged table. Elsewhere the cache holds a
footprint for a short time.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from pyiceberg.catalog import Catalog
from pyiceberg.catalog.sql import SqlCatalog
from pyiceberg.exceptions import NoSuchNamespaceError, NoSuchTableError

from icepurge.activities.locations import table_locations
from icepurge.activities.sql_listing import sql_tables_with_metadata
from icepurge.contract.request import OverlapScope
from icepurge.stores.addresses import normalize

Identifier = tuple[str, ...]
# Tables named in a refusal or in the list of those that could not be loaded.
_NAMED_AT_MOST = 5


@dataclass(frozen=True)
class Footprint:
    identifier: Identifier
    metadata_location: str
    locations: tuple[str, ...]


def overlaps(first: str, second: str) -> bool:
    """Equal, parent or child, with s3a/s3n read as s3 and trailing slashes ignored."""
    one, other = normalize(first), normalize(second)
    return one == other or one.startswith(other + "/") or other.startswith(one + "/")


def load_footprint(catalog: Catalog, identifier: Identifier) -> Footprint | None:
    """None when the catalog no longer holds the table."""
    try:
        table = catalog.load_table(identifier)
    except NoSuchTableError:
        return None
    metadata = table.metadata
    locations = table_locations(metadata.location, metadata.properties)
    return Footprint(identifier, table.metadata_location, tuple(locations))


# Footprints kept by metadata file: a namespace of this many tables fits, at a few hundred bytes each.
_BY_METADATA_AT_MOST = 100_000


@dataclass
class FootprintCache:
    """Locations of the other tables in scope: per catalog and identifier for `ttl_seconds`, and
    by metadata file (immutable) for as long as there is room."""

    ttl_seconds: float
    _entries: dict[tuple[str, Identifier], tuple[float, Footprint | None]] = field(default_factory=dict)
    _by_metadata: OrderedDict[str, Footprint] = field(default_factory=OrderedDict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def of_metadata(self, metadata_location: str) -> Footprint | None:
        with self._lock:
            footprint = self._by_metadata.get(metadata_location)
            if footprint is not None:
                self._by_metadata.move_to_end(metadata_location)
            return footprint

    def keep(self, footprint: Footprint) -> None:
        with self._lock:
            self._by_metadata[footprint.metadata_location] = footprint
            while len(self._by_metadata) > _BY_METADATA_AT_MOST:
                self._by_metadata.popitem(last=False)

    def get(self, catalog: str, identifier: Identifier) -> tuple[bool, Footprint | None]:
        with self._lock:
            entry = self._entries.get((catalog, identifier))
        if entry is None or time.monotonic() - entry[0] > self.ttl_seconds:
            return False, None
        return True, entry[1]

    def put(self, catalog: str, identifier: Identifier, footprint: Footprint | None) -> None:
        with self._lock:
            self._entries[(catalog, identifier)] = (time.monotonic(), footprint)


@dataclass
class GuardScan:
    """What one check found and what it cost."""

    refusal: str | None = None
    catalog_calls: int = 0
    tables_compared: int = 0
    unloadable: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class PurgedTable:
    catalog: str
    identifier: Identifier
    metadata_location: str
    locations: tuple[str, ...]

    @property
    def name(self) -> str:
        return ".".join(self.identifier)

    def uses_the_purged_metadata(self, found: Footprint) -> bool:
        return normalize(found.metadata_location) == normalize(self.metadata_location)

    def refusal(self, found: Footprint) -> str | None:
        who = ".".join(found.identifier)
        if self.uses_the_purged_metadata(found):
            return (
                f"table {who} of catalog {self.catalog!r} uses the purged metadata {self.metadata_location}"
            )
        for theirs in found.locations:
            for ours in self.locations:
                if overlaps(theirs, ours):
                    return (
                        f"table {who} of catalog {self.catalog!r} is live at {theirs}, which overlaps "
                        f"the purged table's location {ours}"
                    )
        return None


class LiveTableScanner:
    def __init__(self, cache: FootprintCache, concurrency: int) -> None:
        self._cache = cache
        self._concurrency = concurrency

    def scan(
        self,
        catalog: Catalog,
        purged: PurgedTable,
        scope: OverlapScope,
        beat: Callable[[], None],
        skip_own: bool = False,
    ) -> GuardScan:
        """With `skip_own`, the identifier's own entry is left out while it still uses the purged
        metadata: a preview's view of what the real purge finds once it has dropped it."""
        found = GuardScan()
        found.catalog_calls += 1
        own = load_footprint(catalog, purged.identifier)
        if own is not None and not (skip_own and purged.uses_the_purged_metadata(own)):
            found.tables_compared += 1
            found.refusal = purged.refusal(own)
        if found.refusal is not None or scope is OverlapScope.TABLE:
            return found
        namespaces = [purged.identifier[:-1]] if scope is OverlapScope.NAMESPACE else None
        others = [
            (identifier, current)
            for identifier, current in self._tables(catalog, namespaces, found, beat)
            if identifier != purged.identifier
        ]
        known = {identifier: self._cache.of_metadata(current) for identifier, current in others if current}
        # A listed metadata file not seen yet: the table changed, so its identifier's entry is stale.
        unknown = [
            (identifier, identifier in known) for identifier, _ in others if known.get(identifier) is None
        ]
        for seen in known.values():
            if seen is not None:
                found.tables_compared += 1
                found.refusal = found.refusal or purged.refusal(seen)
        if not unknown:
            return found
        with ThreadPoolExecutor(max_workers=min(self._concurrency, len(unknown))) as pool:
            loads = pool.map(lambda one: self._footprint(catalog, purged, *one), unknown)
            for (identifier, _), (called, footprint) in zip(unknown, loads, strict=True):
                beat()
                found.catalog_calls += called
                if isinstance(footprint, Exception):
                    found.unloadable.append(".".join(identifier))
                    continue
                if footprint is None:
                    continue
                found.tables_compared += 1
                found.refusal = found.refusal or purged.refusal(footprint)
        return found

    def _footprint(
        self, catalog: Catalog, purged: PurgedTable, identifier: Identifier, changed: bool
    ) -> tuple[int, Footprint | Exception | None]:
        """The catalog calls it took (0 from the cache) and the table's footprint; `changed`: the
        listing named a metadata file the cache doesn't hold, so the table is loaded afresh."""
        cached, footprint = self._cache.get(purged.catalog, identifier)
        if cached and not changed:
            return 0, footprint
        try:
            loaded = load_footprint(catalog, identifier)
        except Exception as error:  # a view or a broken entry: listed, not fatal
            return 1, error
        self._cache.put(purged.catalog, identifier, loaded)
        if loaded is not None:
            self._cache.keep(loaded)
        return 1, loaded

    def _tables(
        self,
        catalog: Catalog,
        namespaces: list[Identifier] | None,
        found: GuardScan,
        beat: Callable[[], None],
    ) -> Iterator[tuple[Identifier, str | None]]:
        """Each table in scope, with its current metadata file where the listing says it."""
        for namespace in namespaces if namespaces is not None else self._every_namespace(catalog, found):
            beat()
            found.catalog_calls += 1
            try:
                if isinstance(catalog, SqlCatalog):
                    yield from sql_tables_with_metadata(catalog, namespace)
                else:
                    yield from ((tuple(identifier), None) for identifier in catalog.list_tables(namespace))
            except NoSuchNamespaceError:
                continue

    @staticmethod
    def _every_namespace(catalog: Catalog, found: GuardScan) -> list[Identifier]:
        """Nested namespaces level by level, each listed once."""
        seen: set[Identifier] = set()
        frontier: list[Identifier] = [()]
        while frontier:
            parent = frontier.pop()
            found.catalog_calls += 1
            try:
                children = [tuple(child) for child in catalog.list_namespaces(parent)]
            except NoSuchNamespaceError:
                continue
            for child in children:
                if child not in seen and len(child) > len(parent):
                    seen.add(child)
                    frontier.append(child)
        return sorted(seen)


def named(items: list[str]) -> str:
    shown = ", ".join(items[:_NAMED_AT_MOST])
    more = len(items) - _NAMED_AT_MOST
    return shown + (f" and {more} more" if more > 0 else "")
