"""The namespace bench's copies of a real table are tables of their own: PyIceberg reads each
back whole, every file a copy names lies under its own location, and purging a copy leaves the
template and the other copies whole."""

from __future__ import annotations

import uuid

import pytest
from pyiceberg.catalog.sql import SqlCatalog

from bench.table_copies import copy_table
from icepurge.devstack.small_tables import create_demo_table
from icepurge.devstack.stack import EmbeddedStack


def _files(table_location: str, catalog: SqlCatalog, identifier: tuple[str, ...]) -> set[str]:
    table = catalog.load_table(identifier)
    named = {table.metadata_location} | {entry.metadata_file for entry in table.metadata.metadata_log}
    for snapshot in table.snapshots():
        named.add(snapshot.manifest_list)
        for manifest in snapshot.manifests(table.io):
            named.add(manifest.manifest_path)
            named |= {entry.data_file.file_path for entry in manifest.fetch_manifest_entry(table.io)}
    assert all(path.startswith(table_location + "/") for path in named), named
    return named


def test_copies_are_whole_tables_of_their_own(catalog: SqlCatalog, stack: EmbeddedStack) -> None:
    namespace = ("copies", f"n{uuid.uuid4().hex[:8]}")
    template = create_demo_table(catalog, namespace, "t00000")
    locations = copy_table(catalog, template, ["t00001", "t00002"], stack.s3_properties, threads=2)

    rows = sorted(template.scan().to_arrow().column("id").to_pylist())
    assert len(rows) == 30
    uuids = {template.metadata.table_uuid}
    for name, location in zip(["t00001", "t00002"], locations, strict=True):
        copy = catalog.load_table((*namespace, name))
        assert copy.location() == location
        assert sorted(copy.scan().to_arrow().column("id").to_pylist()) == rows
        assert len(_files(location, catalog, (*namespace, name))) == 13
        uuids.add(copy.metadata.table_uuid)
    assert len(uuids) == 3

    catalog.purge_table((*namespace, "t00001"))
    assert len(_files(template.location(), catalog, (*namespace, "t00000"))) == 13
    other = catalog.load_table((*namespace, "t00002"))
    assert sorted(other.scan().to_arrow().column("id").to_pylist()) == rows


def test_a_copy_name_of_another_length_is_refused(catalog: SqlCatalog, stack: EmbeddedStack) -> None:
    namespace = ("copies", f"n{uuid.uuid4().hex[:8]}")
    template = create_demo_table(catalog, namespace, "t00000")
    with pytest.raises(ValueError, match="6 characters"):
        copy_table(catalog, template, ["t1"], stack.s3_properties, threads=1)
