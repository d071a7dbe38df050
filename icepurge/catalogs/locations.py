"""URI helpers and the location guard: which files belong to a table's locations."""

from __future__ import annotations

from collections.abc import Iterable

from icepurge.stores.addresses import normalize

# Table properties that move where a table writes; all of them are the table's own locations.
LOCATION_PROPERTIES = ("write.data.path", "write.metadata.path", "write.object-storage.path")


def parent_dir(uri: str) -> str:
    return uri.rsplit("/", 1)[0]


class LocationGuard:
    """A file is the table's only if it sits under one of the table's locations."""

    def __init__(self, locations: Iterable[str], enabled: bool = True) -> None:
        self.prefixes = sorted({normalize(location) + "/" for location in locations if location})
        self.enabled = enabled

    def allows(self, uri: str) -> bool:
        if not self.enabled:
            return True
        candidate = normalize(uri)
        return any(candidate.startswith(prefix) for prefix in self.prefixes)


def table_locations(location: str, properties: dict[str, str]) -> list[str]:
    return [location, *(properties[key] for key in LOCATION_PROPERTIES if properties.get(key))]
