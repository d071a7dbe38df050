"""Synthetic Iceberg tables with many snapshots, manifests, data and delete files, fast: real
metadata written with PyIceberg's manifest writers, real (tiny) objects in the store."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from pyiceberg.catalog import Catalog
from pyiceberg.manifest import (
    DataFile,
    DataFileContent,
    FileFormat,
    ManifestEntry,
    ManifestEntryStatus,
    ManifestFile,
    ManifestWriter,
    write_manifest,
)
from pyiceberg.partitioning import UNPARTITIONED_PARTITION_SPEC
from pyiceberg.schema import Schema
from pyiceberg.table import Table
from pyiceberg.table.snapshots import Operation
from pyiceberg.typedef import Record
from pyiceberg.types import LongType, NestedField

from icepurge.catalogs.namespace_creation import ensure_namespace
from icepurge.devstack.iceberg_writers import AppendManifests, DeleteManifestWriter
from icepurge.stores.registry import open_store
from icepurge.stores.store import StoreContext

SCHEMA = Schema(NestedField(1, "id", LongType(), required=False))
OBJECT_BODY = b"icepurge synthetic data file"
# Writes a tiny object at each path (the store's fastest way).
ObjectWriter = Callable[[list[str]], None]


@dataclass(frozen=True)
class TableShape:
    manifests: int
    files_per_manifest: int
    snapshots: int = 1
    delete_files_per_snapshot: int = 0

    @property
    def content_files(self) -> int:
        return self.manifests * self.files_per_manifest + self.snapshots * self.delete_files_per_snapshot


def content_file(path: str, content: DataFileContent) -> DataFile:
    return DataFile.from_args(
        content=content,
        file_path=path,
        file_format=FileFormat.PARQUET,
        partition=Record(),
        record_count=1,
        file_size_in_bytes=len(OBJECT_BODY),
        spec_id=0,
    )


def store_writer(location: str, properties: dict[str, str], connections: int) -> ObjectWriter:
    """Writes through icepurge's own store for `location`: for S3, ~2,000 tiny objects a second
    on 32 threads here, against ~300 through PyArrow's FileIO (a 50,000-file table took 8 of a
    test's 10 minutes on a slow CI machine)."""
    store = open_store(location, StoreContext(properties, connections=connections))

    def write(paths: list[str]) -> None:
        for path in paths:
            store.write(path, OBJECT_BODY)

    return write


def _fill(
    writer: ManifestWriter, snapshot_id: int, paths: list[str], content: DataFileContent
) -> ManifestFile:
    with writer:
        for path in paths:
            writer.add(
                ManifestEntry.from_args(
                    status=ManifestEntryStatus.ADDED,
                    snapshot_id=snapshot_id,
                    sequence_number=None,
                    file_sequence_number=None,
                    data_file=content_file(path, content),
                )
            )
    return writer.to_manifest_file()


def synthetic_table(
    catalog: Catalog,
    identifier: tuple[str, ...],
    shape: TableShape,
    threads: int = 32,
    write_objects: ObjectWriter | None = None,
) -> Table:
    """Data manifests spread over `shape.snapshots` appends; each append also commits a delete
    manifest of position-delete files. `write_objects` writes the tiny objects (by default
    through icepurge's store for the table's location)."""
    ensure_namespace(catalog, identifier[:-1])
    table = catalog.create_table(identifier, schema=SCHEMA, partition_spec=UNPARTITIONED_PARTITION_SPEC)
    io, location = table.io, table.location()
    batch = uuid.uuid4().hex[:8]
    write = write_objects or store_writer(location, io.properties, threads)
    snapshot_ids = [table.metadata.new_snapshot_id() for _ in range(shape.snapshots)]

    def data_manifest(index: int) -> ManifestFile:
        snapshot_id = snapshot_ids[index % shape.snapshots]
        prefix = f"{location}/data/{batch}-{index:06d}"
        paths = [f"{prefix}-{n:05d}.parquet" for n in range(shape.files_per_manifest)]
        write(paths)
        output = io.new_output(f"{location}/metadata/{batch}-m{index:06d}.avro")
        writer = write_manifest(
            format_version=2,
            spec=UNPARTITIONED_PARTITION_SPEC,
            schema=SCHEMA,
            output_file=output,
            snapshot_id=snapshot_id,
            avro_compression="deflate",
        )
        return _fill(writer, snapshot_id, paths, DataFileContent.DATA)

    def delete_manifest(snapshot: int) -> ManifestFile:
        snapshot_id = snapshot_ids[snapshot]
        prefix = f"{location}/data/{batch}-deletes-{snapshot:04d}"
        paths = [f"{prefix}-{n:05d}.parquet" for n in range(shape.delete_files_per_snapshot)]
        write(paths)
        output = io.new_output(f"{location}/metadata/{batch}-d{snapshot:04d}.avro")
        writer = DeleteManifestWriter(UNPARTITIONED_PARTITION_SPEC, SCHEMA, output, snapshot_id, "deflate")
        return _fill(writer, snapshot_id, paths, DataFileContent.POSITION_DELETES)

    with ThreadPoolExecutor(threads) as pool:
        data = list(pool.map(data_manifest, range(shape.manifests)))
        deletes = (
            list(pool.map(delete_manifest, range(shape.snapshots))) if shape.delete_files_per_snapshot else []
        )
    for snapshot, snapshot_id in enumerate(snapshot_ids):
        manifests = [*data[snapshot :: shape.snapshots], *deletes[snapshot : snapshot + 1]]
        with table.transaction() as transaction:
            producer = AppendManifests(manifests, operation=Operation.APPEND, transaction=transaction, io=io)
            producer._snapshot_id = snapshot_id
            producer.commit()
    return catalog.load_table(identifier)
