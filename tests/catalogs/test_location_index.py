"""The live-table guard's location index: its lookups find exactly the tables a comparison with
every table finds, and a scanner that keeps it per scope follows each listing — tables created,
moved, dropped or registered again from a purged metadata file since the last guard — from a
listing that names each table's metadata file."""

from __future__ import annotations

import gzip
import random
from pathlib import Path

from pyiceberg.catalog.sql import SqlCatalog
from sqlalchemy import text

from icepurge.catalogs.live_tables import (
    FootprintCache,
    LiveTableScanner,
    PurgedTable,
    load_footprint,
    overlaps,
    read_footprint,
)
from icepurge.catalogs.location_index import Footprint, LocationIndex
from icepurge.catalogs.sql import SqlCatalogKind
from icepurge.contract.request import OverlapScope
from icepurge.devstack.guarded_tables import dropped_for_guard
from icepurge.devstack.s3_proxy import s3_proxy, through_proxy
from icepurge.devstack.stack import EmbeddedStack
from icepurge.stores.addresses import normalize
from tests.tables import SCHEMA, simple_table

NAMESPACE = ("wide",)
_SEGMENTS = ("a", "a-b", "ab", "b", "a.b")


def _random_location(rng: random.Random) -> str:
    scheme = rng.choice(["s3://", "s3a://", "s3n://"])
    path = "/".join(rng.choice(_SEGMENTS) for _ in range(rng.randint(0, 3)))
    return f"{scheme}bucket/{path}" + rng.choice(["", "/"])


def _random_footprint(rng: random.Random, identifier: tuple[str, ...]) -> Footprint:
    metadata = f"s3://bucket/m/{rng.randint(0, 20)}.json"
    return Footprint(identifier, metadata, tuple(_random_location(rng) for _ in range(rng.randint(1, 3))))


def _compared_with_each(
    tables: dict[tuple[str, ...], Footprint], metadata: str, locations: list[str]
) -> list[Footprint]:
    return sorted(
        (
            footprint
            for footprint in tables.values()
            if normalize(footprint.metadata_location) == normalize(metadata)
            or any(overlaps(theirs, ours) for theirs in footprint.locations for ours in locations)
        ),
        key=lambda footprint: footprint.identifier,
    )


def test_the_index_finds_what_comparing_with_every_table_finds() -> None:
    rng = random.Random(26)
    index = LocationIndex()
    tables: dict[tuple[str, ...], Footprint] = {}
    found_any = 0
    for _ in range(3_000):
        identifier = ("ns", f"t{rng.randint(0, 40)}")
        if rng.random() < 0.3:
            index.remove(identifier)
            tables.pop(identifier, None)
        else:
            footprint = _random_footprint(rng, identifier)
            index.put(footprint)
            tables[identifier] = footprint
        metadata = f"s3a://bucket//m/{rng.randint(0, 20)}.json"
        locations = [_random_location(rng) for _ in range(rng.randint(1, 3))]
        expected = _compared_with_each(tables, metadata, locations)
        assert index.overlapping(metadata, locations) == expected
        assert len(index) == len(tables)
        found_any += bool(expected) and len(expected) < len(tables)
    # The draws must exercise both answers, or equality proves little.
    assert found_any > 500


def _catalog(tmp_path: Path) -> SqlCatalog:
    catalog = SqlCatalog("wide", uri=f"sqlite:///{tmp_path / 'c.sqlite'}", warehouse=tmp_path.as_uri())
    catalog.create_namespace(NAMESPACE)
    return catalog


def _purged(catalog: SqlCatalog, name: str) -> PurgedTable:
    """A table of the namespace, dropped: what a purge's guard checks after the drop."""
    return dropped_for_guard(catalog, (*NAMESPACE, name))


def test_a_kept_index_follows_what_changed_in_the_namespace_since_the_last_guard(tmp_path: Path) -> None:
    catalog = _catalog(tmp_path)
    for index in range(6):
        catalog.create_table((*NAMESPACE, f"t{index}"), schema=SCHEMA)
    scanner = LiveTableScanner(FootprintCache(ttl_seconds=0), concurrency=2)

    def scan(purged: PurgedTable) -> str | None:
        return scanner.scan(catalog, purged, OverlapScope.NAMESPACE, lambda: None).refusal

    first = _purged(catalog, "t0")
    assert scan(first) is None
    inside = catalog.create_table(
        (*NAMESPACE, "inside"), schema=SCHEMA, location=first.locations[0] + "/nested"
    )
    assert scan(first) is not None and "wide.inside" in (scan(first) or "")
    catalog.drop_table(inside.name())
    assert scan(first) is None

    second = _purged(catalog, "t1")
    moved = catalog.load_table((*NAMESPACE, "t2"))
    with moved.transaction() as change:
        change.set_properties({"write.data.path": second.locations[0] + "/data"})
    assert "wide.t2" in (scan(second) or "")
    with catalog.load_table((*NAMESPACE, "t2")).transaction() as change:
        change.remove_properties("write.data.path")
    assert scan(second) is None

    above = catalog.create_table(
        (*NAMESPACE, "above"), schema=SCHEMA, location=second.locations[0].rsplit("/", 1)[0]
    )
    assert "wide.above" in (scan(second) or "")
    catalog.drop_table(above.name())
    assert scan(second) is None


def test_the_footprints_of_tables_gone_from_a_listing_leave_the_cache(tmp_path: Path) -> None:
    """Kept by metadata file until the bound, every table a worker ever guarded stayed in memory:
    ~40 MiB after a namespace purge of 52,608 tables."""
    catalog = _catalog(tmp_path)
    names = [f"t{index}" for index in range(7)]
    for name in names:
        catalog.create_table((*NAMESPACE, name), schema=SCHEMA)
    metadata = {name: catalog.load_table((*NAMESPACE, name)).metadata_location for name in names[1:]}
    cache = FootprintCache(ttl_seconds=0)
    scanner = LiveTableScanner(cache, concurrency=2)
    assert scanner.scan(catalog, _purged(catalog, "t0"), OverlapScope.NAMESPACE, lambda: None).refusal is None
    assert [name for name, kept in metadata.items() if cache.of_metadata(kept)] == names[1:]
    for name in names[1:5]:
        catalog.drop_table((*NAMESPACE, name))
    assert scanner.scan(catalog, _purged(catalog, "t5"), OverlapScope.NAMESPACE, lambda: None).refusal is None
    assert [name for name, kept in metadata.items() if cache.of_metadata(kept)] == ["t6"]


def test_a_table_registered_again_from_the_purged_metadata_is_named_as_it_is_now(tmp_path: Path) -> None:
    """A footprint kept by metadata file named the table that file was first seen under: a guard
    named a table dropped since, not the one registered from the file."""
    catalog = _catalog(tmp_path)
    catalog.create_table((*NAMESPACE, "first"), schema=SCHEMA)
    catalog.create_table((*NAMESPACE, "other"), schema=SCHEMA)
    scanner = LiveTableScanner(FootprintCache(ttl_seconds=0), concurrency=2)
    # A guard for another table reads `first` and keeps its footprint by metadata file.
    other = scanner.scan(catalog, _purged(catalog, "other"), OverlapScope.NAMESPACE, lambda: None)
    assert other.refusal is None
    purged = _purged(catalog, "first")
    catalog.register_table((*NAMESPACE, "again"), purged.metadata_location)
    refusal = scanner.scan(catalog, purged, OverlapScope.NAMESPACE, lambda: None).refusal
    assert refusal is not None and "uses the purged metadata" in refusal
    assert "wide.again" in refusal and "wide.first" not in refusal


def test_the_sql_listing_names_each_table_with_its_metadata_file_and_leaves_views_out(tmp_path: Path) -> None:
    catalog = _catalog(tmp_path)
    table = catalog.create_table((*NAMESPACE, "kept"), schema=SCHEMA)
    catalog.create_namespace(("elsewhere",))
    catalog.create_table(("elsewhere", "other"), schema=SCHEMA)
    with catalog.engine.begin() as connection:
        connection.execute(
            text(
                "INSERT INTO iceberg_tables (catalog_name, table_namespace, table_name, metadata_location, "
                "previous_metadata_location, iceberg_type) VALUES (:catalog, :namespace, 'a_view', "
                "'s3://w/v/metadata/00000.metadata.json', NULL, 'VIEW')"
            ),
            {"catalog": catalog.name, "namespace": NAMESPACE[0]},
        )

    assert SqlCatalogKind(catalog).tables_with_metadata(NAMESPACE) == {
        (*NAMESPACE, "kept"): table.metadata_location
    }
    assert SqlCatalogKind(catalog).tables_with_metadata(NAMESPACE) == dict.fromkeys(
        [tuple(identifier) for identifier in catalog.list_tables(NAMESPACE)], table.metadata_location
    )


def test_a_footprint_read_from_the_listed_metadata_file_is_the_one_a_load_gives(tmp_path: Path) -> None:
    """Read straight from the metadata file, or, for one it can't read so (gzip-compressed
    metadata, which Iceberg writes under a .gz.metadata.json name), through the catalog's own
    load: the same locations either way."""
    catalog = _catalog(tmp_path)
    plain = catalog.create_table(
        (*NAMESPACE, "plain"), schema=SCHEMA, properties={"write.data.path": f"{tmp_path}/elsewhere"}
    )
    source = Path(plain.metadata_location.removeprefix("file://"))
    packed_file = source.with_name(source.name.replace(".metadata.json", ".gz.metadata.json"))
    packed_file.write_bytes(gzip.compress(source.read_bytes()))
    packed = catalog.register_table((*NAMESPACE, "packed"), f"file://{packed_file}")
    for table in (plain, packed):
        identifier = (*NAMESPACE, table.name()[-1])
        assert read_footprint(catalog, identifier, table.metadata_location) == load_footprint(
            catalog, identifier
        )
    assert read_footprint(catalog, (*NAMESPACE, "plain"), plain.metadata_location) == Footprint(
        (*NAMESPACE, "plain"), plain.metadata_location, (plain.location(), f"{tmp_path}/elsewhere")
    )


def test_a_footprint_of_an_s3_table_costs_one_get_and_no_head(
    catalog: SqlCatalog, stack: EmbeddedStack
) -> None:
    """Regression: each read built a FileIO of its own and PyArrow sent a HEAD before the GET; a
    namespace purge's first guard reads every table of the namespace so, and stalled its tables."""
    table = simple_table(catalog, ("footprints",), "one_get", appends=1)
    identifier = ("footprints", "one_get")
    with s3_proxy(stack.ports.s3) as (port, faults):
        proxied = SqlCatalog(catalog.name, **through_proxy(dict(catalog.properties), port))
        footprint = read_footprint(proxied, identifier, table.metadata_location)
    assert footprint == load_footprint(catalog, identifier)
    assert dict(faults.requests) == {"GET": 1}
