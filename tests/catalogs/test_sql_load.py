"""The SQL catalog kind's load: the table PyIceberg's `load_table` gives, with the same errors, its
metadata file read through icepurge's stores in one GET. PyIceberg's load built a FileIO each time,
and on S3 a PyArrow file system that sent a HEAD before its GET, once for every table a purge
loads."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest
from pyiceberg.catalog.sql import SqlCatalog
from pyiceberg.exceptions import NoSuchTableError
from pyiceberg.table import Table

from icepurge.catalogs.sql import SqlCatalogKind
from icepurge.devstack.s3_proxy import s3_proxy, through_proxy
from icepurge.devstack.stack import EmbeddedStack
from tests.tables import SCHEMA, simple_table

NAMESPACE = ("loads",)


def _same(ours: Table, theirs: Table) -> None:
    assert ours.name() == theirs.name()
    assert ours.metadata_location == theirs.metadata_location
    assert ours.metadata == theirs.metadata
    assert ours.io.properties == theirs.io.properties
    assert type(ours.io) is type(theirs.io)


def test_an_s3_table_loads_as_pyiceberg_loads_it_in_one_get(
    catalog: SqlCatalog, stack: EmbeddedStack
) -> None:
    simple_table(catalog, NAMESPACE, "on_s3", appends=2)
    identifier = (*NAMESPACE, "on_s3")
    with s3_proxy(stack.ports.s3) as (port, faults):
        proxied = SqlCatalog(catalog.name, **through_proxy(dict(catalog.properties), port))
        loaded = SqlCatalogKind(proxied).load(identifier)
        requests = dict(faults.requests)
        _same(loaded, proxied.load_table(identifier))
    assert requests == {"GET": 1}


def test_a_gzip_metadata_file_loads_and_missing_ones_fail_as_in_pyiceberg(tmp_path: Path) -> None:
    catalog = SqlCatalog("loads", uri=f"sqlite:///{tmp_path / 'c.sqlite'}", warehouse=tmp_path.as_uri())
    catalog.create_namespace(NAMESPACE)
    plain = catalog.create_table((*NAMESPACE, "plain"), schema=SCHEMA)
    source = Path(plain.metadata_location.removeprefix("file://"))
    packed_file = source.with_name(source.name.replace(".metadata.json", ".gz.metadata.json"))
    packed_file.write_bytes(gzip.compress(source.read_bytes()))
    catalog.register_table((*NAMESPACE, "packed"), f"file://{packed_file}")
    kind = SqlCatalogKind(catalog)
    for name in ("plain", "packed"):
        _same(kind.load((*NAMESPACE, name)), catalog.load_table((*NAMESPACE, name)))

    with pytest.raises(NoSuchTableError, match=r"loads\.absent"):
        kind.load((*NAMESPACE, "absent"))
    packed_file.unlink()
    with pytest.raises(FileNotFoundError):
        catalog.load_table((*NAMESPACE, "packed"))
    with pytest.raises(FileNotFoundError):
        kind.load((*NAMESPACE, "packed"))
