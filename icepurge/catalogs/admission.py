"""Which catalogs a process takes purges for: those configured the PyIceberg way, and, for purges
by snapshot, those the deployment declared snapshot-only once, in ICEPURGE_SNAPSHOT_ONLY_CATALOGS:
catalogs that hand over a dropped table's snapshot and that icepurge can't ask for live tables.
Any other name is refused before anything runs, with the names that would do: a typo must not
switch the live-table guard off."""

from __future__ import annotations

from collections.abc import Iterable

from icepurge.catalogs.configured import CatalogRegistry

# Declares every catalog name snapshot-only.
ANY_CATALOG = "*"
SNAPSHOT_ONLY_SETTING = "ICEPURGE_SNAPSHOT_ONLY_CATALOGS"


class CatalogNotAdmittedError(LookupError):
    """A catalog neither configured nor declared snapshot-only; the message says what to do."""


def unknown_catalog(name: str, configured: Iterable[str], snapshot: bool = True) -> str:
    """The refusal, naming the catalogs that would do (and, for a snapshot, the other way in)."""
    shown = ", ".join(sorted(configured)) or "none"
    refusal = f"catalog {name!r} is not configured (configured: {shown}); configure it the PyIceberg way"
    if not snapshot:
        return refusal
    return (
        f"{refusal}, or, for a catalog icepurge can't reach that hands over dropped tables' "
        f"snapshots, declare it in {SNAPSHOT_ONLY_SETTING}"
    )


class CatalogAdmission:
    def __init__(self, registry: CatalogRegistry, snapshot_only: Iterable[str]) -> None:
        self._registry = registry
        self._snapshot_only = frozenset(name.lower() for name in snapshot_only)

    @property
    def registry(self) -> CatalogRegistry:
        return self._registry

    def unguarded(self, name: str) -> str | None:
        """None for a configured catalog (its live-table guard applies); for a declared
        snapshot-only one, why no guard can. CatalogNotAdmittedError for any other name."""
        if self._registry.knows(name):
            return None
        if ANY_CATALOG in self._snapshot_only or name.lower() in self._snapshot_only:
            return (
                f"catalog {name!r} is declared snapshot-only ({SNAPSHOT_ONLY_SETTING}): it is not "
                "configured here, so no catalog can be asked for live tables"
            )
        raise CatalogNotAdmittedError(unknown_catalog(name, self._registry.names()))
