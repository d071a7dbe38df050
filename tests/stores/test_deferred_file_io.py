"""A table's FileIO is built at its first request, as PyIceberg would have built it at the load: the
same properties, the same choice of implementation (`py-io-impl` included), one build. Tables a
configured catalog loads get one; loading and planning a table then never imports PyArrow."""

from __future__ import annotations

import pickle
import subprocess
import sys
from pathlib import Path

import pytest
from pyiceberg.catalog import Catalog
from pyiceberg.catalog.sql import SqlCatalog
from pyiceberg.io import PY_IO_IMPL, FileIO, InputFile, OutputFile
from pyiceberg.io.pyarrow import PyArrowFileIO

from icepurge.catalogs.configured import CatalogRegistry
from icepurge.catalogs.registry import kind_of
from icepurge.devstack.catalog_env import pyiceberg_catalog_env
from icepurge.stores.deferred_file_io import DeferredFileIO
from tests.tables import simple_table

builds: list[dict[str, str]] = []


class CountingFileIO(PyArrowFileIO):
    """A `py-io-impl` of the user's: PyArrow's, counting its builds."""

    def __init__(self, properties: dict[str, str]) -> None:
        builds.append(dict(properties))
        super().__init__(properties)


def test_the_file_io_is_built_once_at_the_first_request_with_pyicebergs_choice(tmp_path: Path) -> None:
    data = tmp_path / "data.bin"
    data.write_bytes(b"purge me")
    builds.clear()
    properties = {PY_IO_IMPL: f"{__name__}.CountingFileIO", "some.property": "kept"}
    io = DeferredFileIO(properties, tmp_path.as_uri())
    assert not io.built and builds == []
    with io.new_input(data.as_uri()).open() as stream:
        assert stream.read() == b"purge me"
    written: OutputFile = io.new_output((tmp_path / "out.bin").as_uri())
    with written.create() as stream:
        stream.write(b"new")
    io.delete(io.new_input(data.as_uri()))
    io.delete((tmp_path / "out.bin").as_uri())
    assert io.built and builds == [properties]
    assert not data.exists() and not (tmp_path / "out.bin").exists()


def test_without_an_implementation_named_it_is_the_one_pyiceberg_infers(tmp_path: Path) -> None:
    io = DeferredFileIO({}, tmp_path.as_uri())
    found: InputFile = io.new_input((tmp_path / "absent").as_uri())
    assert not found.exists()
    assert isinstance(io._io(tmp_path.as_uri()), PyArrowFileIO)


def test_a_deferred_file_io_pickles_unbuilt_and_builds_again(tmp_path: Path) -> None:
    io = DeferredFileIO({"a": "b"}, tmp_path.as_uri())
    io.new_input(tmp_path.as_uri()).exists()
    copied = pickle.loads(pickle.dumps(io))
    assert copied.properties == {"a": "b"} and not copied.built
    assert copied.new_input(tmp_path.as_uri()).exists()


def test_tables_a_configured_catalog_loads_get_it_with_the_merged_properties(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    properties = {"type": "sql", "uri": f"sqlite:///{tmp_path / 'c.sqlite'}", "warehouse": tmp_path.as_uri()}
    writer = SqlCatalog("deferring", **{key: value for key, value in properties.items() if key != "type"})
    table = simple_table(writer, ("ns",), "t", appends=1)
    for key, value in pyiceberg_catalog_env("deferring", properties).items():
        monkeypatch.setenv(key, value)
    catalog = CatalogRegistry.from_pyiceberg_config().catalog("deferring")
    for loaded in (catalog.load_table(("ns", "t")), kind_of(catalog).load(("ns", "t"))):
        io: FileIO = loaded.io
        assert isinstance(io, DeferredFileIO) and not io.built
        # What PyIceberg's own `_load_file_io` (not the catalog's override) merges.
        pyicebergs = Catalog._load_file_io(catalog, loaded.metadata.properties, loaded.metadata_location)
        assert io.properties == pyicebergs.properties and "uri" in io.properties
        assert loaded.metadata_location == table.metadata_location


def test_the_worker_imports_neither_pyarrow_nor_pandas() -> None:
    """~100 MiB of a worker's memory; the planning module imported PyArrow before."""
    imported = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys, icepurge.worker.run, icepurge.api.cli.main; "
            "print(sorted({'pyarrow', 'pandas'} & set(sys.modules)))",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    assert imported.stdout.strip() == "[]"
