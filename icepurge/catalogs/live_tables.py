"""The live-table guard: before a purge's first delete, is any table the catalog still holds using
the purged metadata, or locations overlapping the purged table's (equal, parent or child)? A
table dropped and re-created at the same place, or registered again from the same metadata,
would lose its files to the purge.

Its cost is bounded: one listing per namespace in scope, shared by the guards that ask for it at
once (icepurge/catalogs/fresh_listing.py: each still sees a listing begun after it asked) and by
a small-table batch's guards (icepurge/catalogs/guard_cohort.py), table loads on a bounded pool,
and the other tables' locations kept per worker (the identifier's own table is always loaded
afresh). Each scope's tables sit in a location index brought up to date once from each fresh
listing (icepurge/catalogs/location_index.py): a guard looks up the purged locations instead of
comparing them with every table, and reads only the tables that changed. Where the catalog's
listing says each table's current metadata file (the SQL catalog: one query per namespace), a
table is known changed by that file, which never changes: a namespace purge's guards read each
other table's metadata once, not once per purged table. Elsewhere a footprint is kept for a
short time.
"""

from __future__ import annotations

import json
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace

from pyiceberg.catalog import Catalog
from pyiceberg.exceptions import NoSuchNamespaceError, NoSuchTableError

from icepurge.catalogs.fresh_listing import WAIT_BEAT_SECONDS, FreshListing
from icepurge.catalogs.guard_cohort import GuardParty
from icepurge.catalogs.location_index import Footprint, Identifier, LocationIndex
from icepurge.catalogs.locations import table_locations
from icepurge.catalogs.registry import kind_of
from icepurge.contract.request import OverlapScope
from icepurge.stores.addresses import normalize
from icepurge.stores.registry import open_store
from icepurge.stores.shared_threads import BoundedPool
from icepurge.stores.store import READ_CONNECTIONS, StoreContext

# Tables named in a refusal or in the list of those that could not be loaded.
_NAMED_AT_MOST = 5


def overlaps(first: str, second: str) -> bool:
    """Equal, parent or child, with s3a/s3n read as s3 and trailing slashes ignored."""
    one, other = normalize(first), normalize(second)
    return one == other or one.startswith(other + "/") or other.startswith(one + "/")


def load_footprint(catalog: Catalog, identifier: Identifier) -> Footprint | None:
    """None when the catalog no longer holds the table."""
    try:
        table = kind_of(catalog).load(identifier)
    except NoSuchTableError:
        return None
    metadata = table.metadata
    locations = table_locations(metadata.location, metadata.properties)
    return Footprint(identifier, table.metadata_location, tuple(locations))


def read_footprint(catalog: Catalog, identifier: Identifier, metadata_location: str) -> Footprint | None:
    """The footprint of the metadata file a listing names, read with the catalog's FileIO
    properties through the store layer (one GET; a FileIO built for each file took most of a
    namespace purge's first guard, which reads every table of the namespace): what loading the
    table at that file gives, without the catalog's query and the parse of the whole metadata
    into PyIceberg's model. A file this can't read (compressed, or needing the table's own FileIO
    settings) is left to a load."""
    try:
        context = StoreContext(catalog.properties, connections=READ_CONNECTIONS)
        metadata = json.loads(open_store(metadata_location, context).read(metadata_location))
        locations = table_locations(metadata["location"], metadata.get("properties") or {})
    except Exception:  # unreadable here, whatever the reason: the catalog's own load decides
        return load_footprint(catalog, identifier)
    return Footprint(identifier, metadata_location, tuple(locations))


# Footprints kept by metadata file: a namespace of this many tables fits, at a few hundred bytes each.
_BY_METADATA_AT_MOST = 100_000
# Footprints kept by table, however recent: a worker guards tables without end, and one entry per
# table it ever saw would grow with them (~2 KB a table with the index, 200 MiB at 10^5).
_BY_TABLE_AT_MOST = 100_000
# Scopes whose location index a worker keeps; the least recently guarded one goes first.
_SCOPES_AT_MOST = 64


@dataclass
class FootprintCache:
    """Locations of the other tables in scope: per catalog and identifier for `ttl_seconds` (the
    oldest leave as new ones come, once past their time or past _BY_TABLE_AT_MOST), and by
    metadata file (immutable) until a listing no longer shows the table, or room runs out."""

    ttl_seconds: float
    _entries: OrderedDict[tuple[str, Identifier], tuple[float, Footprint | None]] = field(
        default_factory=OrderedDict
    )
    _by_metadata: OrderedDict[str, Footprint] = field(default_factory=OrderedDict)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    clock: Callable[[], float] = time.monotonic

    def __len__(self) -> int:
        """Tables it answers for by identifier, past their time or not."""
        with self._lock:
            return len(self._entries)

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

    def forget(self, metadata_location: str) -> None:
        """A table gone from the catalog: its metadata file will not be listed again, unless the
        table is registered from it again (then read once more)."""
        with self._lock:
            self._by_metadata.pop(metadata_location, None)

    def get(self, catalog: str, identifier: Identifier) -> tuple[bool, Footprint | None]:
        with self._lock:
            entry = self._entries.get((catalog, identifier))
        if entry is None or self.clock() - entry[0] > self.ttl_seconds:
            return False, None
        return True, entry[1]

    def put(self, catalog: str, identifier: Identifier, footprint: Footprint | None) -> None:
        now = self.clock()
        with self._lock:
            self._entries[(catalog, identifier)] = (now, footprint)
            self._entries.move_to_end((catalog, identifier))
            # In the order they were put: the first one still in time ends the sweep.
            while self._entries and (
                len(self._entries) > _BY_TABLE_AT_MOST
                or now - next(iter(self._entries.values()))[0] > self.ttl_seconds
            ):
                self._entries.popitem(last=False)


@dataclass
class GuardScan:
    """What one check found and what it cost."""

    refusal: str | None = None
    catalog_calls: int = 0
    tables_compared: int = 0
    unloadable: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class PurgedTable:
    """The table a guard checks for; a batch's table is a `party` of the batch's guards, which
    share one listing."""

    catalog: str
    identifier: Identifier
    metadata_location: str
    locations: tuple[str, ...]
    party: GuardParty | None = field(default=None, compare=False)

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


ScopeKey = tuple[str, OverlapScope, Identifier]


def _own_entry(footprint: Footprint, own: Footprint | None, identifier: Identifier) -> bool:
    """Whether a listed table is the identifier's own entry, compared (or, in a preview, left out)
    already: the same levels joined by dots, at the same metadata file. SQL catalogs and
    SeaweedFS's keep namespaces as dotted names (`("a.b", "t")` is `("a", "b", "t")` there).
    Without an own entry (dropped), none is: a table listed under the name since is another."""
    return (
        own is not None
        and footprint.metadata_location == own.metadata_location
        and ".".join(footprint.identifier) == ".".join(identifier)
    )


@contextmanager
def _held(lock: threading.Lock, beat: Callable[[], None]) -> Iterator[None]:
    """The scope's lock, heartbeating while another guard of the scope holds it."""
    while not lock.acquire(timeout=WAIT_BEAT_SECONDS):
        beat()
    try:
        yield
    finally:
        lock.release()


@dataclass
class _Scope:
    """One scope's index, and each indexed table's metadata file as last listed."""

    index: LocationIndex = field(default_factory=LocationIndex)
    listed: dict[Identifier, str] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)
    listing: FreshListing[dict[Identifier, str | None]] = field(default_factory=FreshListing)
    # The listing the index was last brought up to, and the tables it could not read: the guards
    # sharing a listing follow it once.
    followed: dict[Identifier, str | None] | None = None
    unloadable: list[str] = field(default_factory=list)

    def keep(self, footprint: Footprint) -> None:
        self.index.put(footprint)
        self.listed[footprint.identifier] = footprint.metadata_location

    def forget(self, identifier: Identifier) -> None:
        self.index.remove(identifier)
        self.listed.pop(identifier, None)


@dataclass(frozen=True)
class _ScanRun:
    """One scan under way: the catalog it reads, the table it guards, what it has found so far,
    and the heartbeat its waits and loads keep alive."""

    catalog: Catalog
    purged: PurgedTable
    found: GuardScan
    beat: Callable[[], None]


class LiveTableScanner:
    def __init__(self, cache: FootprintCache, concurrency: int) -> None:
        self._cache = cache
        self._concurrency = concurrency
        self._scopes: OrderedDict[ScopeKey, _Scope] = OrderedDict()
        self._scopes_lock = threading.Lock()

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
        try:
            return self._scan(_ScanRun(catalog, purged, GuardScan(), beat), scope, skip_own)
        finally:
            if purged.party is not None:
                purged.party.past_asking()

    def _scan(self, run: _ScanRun, scope: OverlapScope, skip_own: bool) -> GuardScan:
        catalog, purged, found, beat = run.catalog, run.purged, run.found, run.beat
        found.catalog_calls += 1
        own = load_footprint(catalog, purged.identifier)
        if own is not None and not (skip_own and purged.uses_the_purged_metadata(own)):
            found.tables_compared += 1
            found.refusal = purged.refusal(own)
        if found.refusal is not None or scope is OverlapScope.TABLE:
            return found
        namespace = purged.identifier[:-1] if scope is OverlapScope.NAMESPACE else ()
        namespaces = [namespace] if scope is OverlapScope.NAMESPACE else None
        kept = self._scope((purged.catalog, scope, namespace))
        wanted = purged.party.number(kept.listing, beat) if purged.party is not None else None
        listing = kept.listing.take(lambda: self._tables(catalog, namespaces, found, beat), beat, wanted)
        with _held(kept.lock, beat):
            if kept.followed is not listing:
                kept.unloadable = self._follow(run, kept, listing)
                kept.followed = listing
            found.unloadable += kept.unloadable
            found.tables_compared += len(kept.index)
            for footprint in kept.index.overlapping(purged.metadata_location, purged.locations):
                if _own_entry(footprint, own, purged.identifier):
                    continue
                found.refusal = purged.refusal(footprint)
                if found.refusal is not None:
                    break
        return found

    def _scope(self, key: ScopeKey) -> _Scope:
        with self._scopes_lock:
            kept = self._scopes.get(key)
            if kept is None:
                kept = self._scopes[key] = _Scope()
                while len(self._scopes) > _SCOPES_AT_MOST:
                    self._scopes.popitem(last=False)
            self._scopes.move_to_end(key)
            return kept

    def _follow(self, run: _ScanRun, kept: _Scope, listing: dict[Identifier, str | None]) -> list[str]:
        """The index brought up to the listing: tables gone leave it; tables listed at a metadata
        file other than the one indexed, or listed without one, are read (from the cache where it
        has them) and replace their entry. Returns the tables that could not be read."""
        catalog, purged, found = run.catalog, run.purged, run.found
        unloadable: list[str] = []
        for gone in kept.listed.keys() - listing.keys():
            # Kept by metadata file, every table a worker ever guarded would stay until the bound
            # (~76 MiB at 10^5 tables).
            self._cache.forget(kept.listed[gone])
            kept.forget(gone)
        unknown = self._kept_or_unknown(purged.catalog, kept, listing)
        if not unknown:
            return unloadable
        with BoundedPool(min(self._concurrency, len(unknown))) as pool:
            loads = pool.map(
                lambda identifier: self._footprint(catalog, purged, identifier, listing[identifier]), unknown
            )
            for identifier, footprint in zip(unknown, loads, strict=True):
                run.beat()
                found.catalog_calls += 1
                if isinstance(footprint, Exception):
                    kept.forget(identifier)
                    unloadable.append(".".join(identifier))
                elif footprint is None:
                    kept.forget(identifier)
                else:
                    kept.keep(footprint)
        return unloadable

    def _kept_or_unknown(
        self, catalog: str, kept: _Scope, listing: dict[Identifier, str | None]
    ) -> list[Identifier]:
        """Listed tables the cache answers for go into the index; the others are returned, to be
        loaded: not in the short-lived cache, or listed at a metadata file not seen yet (the table
        changed, so its identifier's cached entry is stale)."""
        unknown: list[Identifier] = []
        for identifier in (identifier for identifier, current in listing.items() if current is None):
            cached, footprint = self._cache.get(catalog, identifier)
            if not cached:
                unknown.append(identifier)
            elif footprint is None:
                kept.forget(identifier)
            else:
                kept.keep(footprint)
        # Set operations on the two listings: 10,000 unchanged tables cost a few milliseconds.
        for identifier, current in listing.items() - kept.listed.items():
            if current is None:
                continue
            seen = self._cache.of_metadata(current)
            if seen is None:
                unknown.append(identifier)
            else:
                # Registered again from the same metadata: its footprint under this name.
                kept.keep(replace(seen, identifier=identifier))
        return unknown

    def _footprint(
        self, catalog: Catalog, purged: PurgedTable, identifier: Identifier, listed_at: str | None
    ) -> Footprint | Exception | None:
        """The table's footprint, read from the metadata file its listing names, else loaded (one
        catalog call), and kept in both caches."""
        try:
            if listed_at is None:
                loaded = load_footprint(catalog, identifier)
            else:
                loaded = read_footprint(catalog, identifier, listed_at)
        except Exception as error:  # a view or a broken entry: listed, not fatal
            return error
        self._cache.put(purged.catalog, identifier, loaded)
        if loaded is not None:
            self._cache.keep(loaded)
        return loaded

    def _tables(
        self,
        catalog: Catalog,
        namespaces: list[Identifier] | None,
        found: GuardScan,
        beat: Callable[[], None],
    ) -> dict[Identifier, str | None]:
        """Each table in scope, with its current metadata file where the listing says it."""
        tables: dict[Identifier, str | None] = {}
        kind = kind_of(catalog)
        for namespace in namespaces if namespaces is not None else self._every_namespace(catalog, found):
            beat()
            found.catalog_calls += 1
            try:
                tables.update(kind.tables_with_metadata(namespace))
            except NoSuchNamespaceError:
                continue
        return tables

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
