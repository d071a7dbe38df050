"""What a purge's live-table guard checks, for the tests and benchmarks of the guard."""

from __future__ import annotations

from pyiceberg.catalog import Catalog

from icepurge.catalogs.guard_cohort import GuardParty
from icepurge.catalogs.live_tables import PurgedTable
from icepurge.catalogs.locations import table_locations


def dropped_for_guard(
    catalog: Catalog, identifier: tuple[str, ...], party: GuardParty | None = None
) -> PurgedTable:
    """The table dropped, as a purge drops it before its guard, and what that guard checks."""
    table = catalog.load_table(identifier)
    catalog.drop_table(identifier)
    return PurgedTable(
        catalog=catalog.name,
        identifier=identifier,
        metadata_location=table.metadata_location,
        locations=tuple(table_locations(table.metadata.location, table.metadata.properties)),
        party=party,
    )
