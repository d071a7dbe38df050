"""The physical limit compare_engines reports: what a purge must read is every metadata file, manifest
list and manifest the table's metadata reaches, each once — on a table that never expired a
snapshot, every object in its metadata folder."""

from __future__ import annotations

from pathlib import Path

from pyiceberg.catalog.sql import SqlCatalog

from bench.physical_limit import metadata_objects, read_limit
from tests.tables import simple_table


def test_a_purge_reads_every_object_of_the_metadata_folder_once(tmp_path: Path) -> None:
    catalog = SqlCatalog("local", uri=f"sqlite:///{tmp_path}/catalog.db", warehouse=tmp_path.as_uri())
    table = simple_table(catalog, ("limit",), "reads", appends=4)
    with table.transaction() as change:
        change.set_properties({"touched": "yes"})
    table = catalog.load_table(("limit", "reads"))
    folder = Path(table.location().removeprefix("file://")) / "metadata"
    on_disk = sorted(path.as_uri() for path in folder.iterdir())

    read = metadata_objects(table, {})

    assert len(read) == len(set(read))
    assert sorted(f"file://{path.removeprefix('file://')}" for path in read) == on_disk
    assert read_limit(read, {}).objects == len(on_disk)
