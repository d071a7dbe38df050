"""Synthetic Iceberg tables with many manifests and files, fast: real metadata written with
PyIceberg's manifest writers in one commit, real (tiny) objects in the store."""

from __future__ import annotations

import uuid
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from pyiceberg.catalog import Catalog
from pyiceberg.manifest import (
    DataFile,
    DataFileContent,
    FileFormat,
    ManifestEntry,
    ManifestEntryStatus,
    ManifestFile,
    write_manifest,
)
from pyiceberg.partitioning import UNPARTITIONED_PARTITION_SPEC
from pyiceberg.schema import Schema
from pyiceberg.table import Table
from pyiceberg.table.snapshots import Operation
from pyiceberg.table.update.snapshot import _FastAppendFiles
from pyiceberg.typedef import Record
from pyiceberg.types import LongType, NestedField

SCHEMA = Schema(NestedField(1, "id", LongType(), required=False))
OBJECT_BODY = b"icepurge synthetic data file"


class _CommitManifests(_FastAppendFiles):
    """A fast append of manifests written beforehand, in parallel."""

    def __init__(self, manifests: list[ManifestFile], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._prewritten = manifests

    def _manifests(self) -> list[ManifestFile]:
        return [*super()._manifests(), *self._prewritten]


def _data_file(path: str) -> DataFile:
    return DataFile.from_args(
        content=DataFileContent.DATA,
        file_path=path,
        file_format=FileFormat.PARQUET,
        partition=Record(),
        record_count=1,
        file_size_in_bytes=len(OBJECT_BODY),
        spec_id=0,
    )


def synthetic_table(
    catalog: Catalog,
    identifier: tuple[str, ...],
    manifests: int,
    files_per_manifest: int,
    threads: int = 32,
) -> Table:
    catalog.create_namespace_if_not_exists(identifier[:-1])
    table = catalog.create_table(identifier, schema=SCHEMA, partition_spec=UNPARTITIONED_PARTITION_SPEC)
    io, location = table.io, table.location()
    snapshot_id = table.metadata.new_snapshot_id()
    batch = uuid.uuid4().hex[:8]

    def write_one(index: int) -> ManifestFile:
        paths = [f"{location}/data/{batch}-{index:06d}-{n:05d}.parquet" for n in range(files_per_manifest)]
        for path in paths:
            with io.new_output(path).create(overwrite=True) as stream:
                stream.write(OBJECT_BODY)
        writer = write_manifest(
            format_version=2,
            spec=UNPARTITIONED_PARTITION_SPEC,
            schema=SCHEMA,
            output_file=io.new_output(f"{location}/metadata/{batch}-m{index:06d}.avro"),
            snapshot_id=snapshot_id,
            avro_compression="deflate",
        )
        with writer:
            for path in paths:
                writer.add(
                    ManifestEntry.from_args(
                        status=ManifestEntryStatus.ADDED,
                        snapshot_id=snapshot_id,
                        sequence_number=None,
                        file_sequence_number=None,
                        data_file=_data_file(path),
                    )
                )
        return writer.to_manifest_file()

    with ThreadPoolExecutor(threads) as pool:
        written = list(pool.map(write_one, range(manifests)))
    with table.transaction() as transaction:
        producer = _CommitManifests(written, operation=Operation.APPEND, transaction=transaction, io=io)
        producer._snapshot_id = snapshot_id
        producer.commit()
    return catalog.load_table(identifier)
