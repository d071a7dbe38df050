"""Where the tables of one guard scope live, indexed: which of them use a metadata file, or sit at,
under or above a location, found by lookups instead of a comparison with every table. Locations
are normalized once, when a table enters the index, and the index follows each listing by what
changed in it, so a namespace purge's guards cost what changed, not the namespace's size."""

from __future__ import annotations

from bisect import bisect_left, insort
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from icepurge.stores.addresses import normalize

Identifier = tuple[str, ...]


@dataclass(frozen=True)
class Footprint:
    identifier: Identifier
    metadata_location: str
    locations: tuple[str, ...]


@dataclass(frozen=True)
class _Indexed:
    footprint: Footprint
    metadata: str
    locations: frozenset[str]


def ancestors(location: str) -> Iterator[str]:
    """Every prefix of a normalized location that ends where one of its "/" starts."""
    end = location.rfind("/")
    while end > 0:
        yield location[:end]
        end = location.rfind("/", 0, end)


@dataclass
class LocationIndex:
    _tables: dict[Identifier, _Indexed] = field(default_factory=dict)
    _by_metadata: dict[str, set[Identifier]] = field(default_factory=dict)
    _by_location: dict[str, set[Identifier]] = field(default_factory=dict)
    # The distinct locations of _by_location, sorted: a location's children are one range of it.
    _sorted: list[str] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self._tables)

    def put(self, footprint: Footprint) -> None:
        held = self._tables.get(footprint.identifier)
        if held is not None and held.footprint == footprint:
            return
        self.remove(footprint.identifier)
        indexed = _Indexed(
            footprint,
            normalize(footprint.metadata_location),
            frozenset(normalize(location) for location in footprint.locations),
        )
        self._tables[footprint.identifier] = indexed
        self._by_metadata.setdefault(indexed.metadata, set()).add(footprint.identifier)
        for location in indexed.locations:
            holders = self._by_location.setdefault(location, set())
            if not holders:
                insort(self._sorted, location)
            holders.add(footprint.identifier)

    def remove(self, identifier: Identifier) -> None:
        indexed = self._tables.pop(identifier, None)
        if indexed is None:
            return
        _discard(self._by_metadata, indexed.metadata, identifier)
        for location in indexed.locations:
            if _discard(self._by_location, location, identifier):
                del self._sorted[bisect_left(self._sorted, location)]

    def overlapping(self, metadata_location: str, locations: Iterable[str]) -> list[Footprint]:
        """The tables that use the metadata file or whose locations are equal to, under or above
        one of `locations`, in identifier order."""
        found = set(self._by_metadata.get(normalize(metadata_location), ()))
        for location in {normalize(location) for location in locations}:
            for at in (location, *ancestors(location)):
                found.update(self._by_location.get(at, ()))
            below = location + "/"
            at_child = bisect_left(self._sorted, below)
            while at_child < len(self._sorted) and self._sorted[at_child].startswith(below):
                found.update(self._by_location[self._sorted[at_child]])
                at_child += 1
        return [self._tables[identifier].footprint for identifier in sorted(found)]


def _discard(index: dict[str, set[Identifier]], key: str, identifier: Identifier) -> bool:
    """True when the key held nothing else and left the index."""
    holders = index.get(key)
    if holders is None:
        return False
    holders.discard(identifier)
    if holders:
        return False
    del index[key]
    return True
