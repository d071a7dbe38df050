"""Real Iceberg tables for tests, written by PyIceberg: many snapshots, evolution, statistics,
position- and equality-delete files, snapshots expired without file cleanup."""

from __future__ import annotations

import io as std_io
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
from pyiceberg.catalog import Catalog
from pyiceberg.manifest import (
    DataFile,
    DataFileContent,
    FileFormat,
    ManifestEntry,
    ManifestEntryStatus,
    ManifestFile,
)
from pyiceberg.partitioning import PartitionField, PartitionSpec
from pyiceberg.schema import Schema
from pyiceberg.table import Table
from pyiceberg.table.snapshots import Operation
from pyiceberg.table.statistics import BlobMetadata, PartitionStatisticsFile, StatisticsFile
from pyiceberg.table.update import SetPartitionStatisticsUpdate
from pyiceberg.table.update.snapshot import _FastAppendFiles
from pyiceberg.transforms import IdentityTransform
from pyiceberg.typedef import Record
from pyiceberg.types import LongType, NestedField, StringType

from icepurge.devstack.iceberg_writers import DeleteManifestWriter
from icepurge.devstack.rewrite_heavy_table import RewriteShape

# Small enough for the suite, rewrite-heavy enough that files are listed several times each.
REWRITE_SHAPE = RewriteShape(
    partitions=10, appends=8, row_deletes=4, partition_deletes=1, overwrites=2, expired=3
)

SCHEMA = Schema(
    NestedField(1, "id", LongType(), required=False),
    NestedField(2, "category", StringType(), required=False),
)
SPEC = PartitionSpec(
    PartitionField(source_id=2, field_id=1000, transform=IdentityTransform(), name="category")
)


def rows(start: int, count: int, category: str = "a") -> pa.Table:
    return pa.table(
        {
            "id": pa.array(range(start, start + count), pa.int64()),
            "category": pa.array([category] * count, pa.string()),
        }
    )


def simple_table(
    catalog: Catalog,
    namespace: tuple[str, ...],
    name: str,
    appends: int = 3,
    properties: dict[str, str] | None = None,
) -> Table:
    catalog.create_namespace_if_not_exists(namespace)
    table = catalog.create_table(
        (*namespace, name), schema=SCHEMA, partition_spec=SPEC, properties=properties or {}
    )
    for index in range(appends):
        table.append(rows(index * 10, 10, category=f"c{index % 3}"))
    return table


def many_files_table(
    catalog: Catalog, namespace: tuple[str, ...], name: str, manifests: int, files: int
) -> Table:
    """`manifests` appends of `files` data files each (one partition value per file)."""
    catalog.create_namespace_if_not_exists(namespace)
    table = catalog.create_table((*namespace, name), schema=SCHEMA, partition_spec=SPEC)
    for batch in range(manifests):
        table.append(
            pa.concat_tables(rows(batch * files + i, 1, category=f"p{batch}-{i}") for i in range(files))
        )
    return table


class _AppendDeleteFiles(_FastAppendFiles):
    """A fast append whose new snapshot also carries a delete manifest (PyIceberg's table API
    writes no delete files, its manifest writers do)."""

    def __init__(self, delete_files: list[DataFile], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._delete_files = delete_files

    def _manifests(self) -> list[ManifestFile]:
        manifests = super()._manifests()
        spec = self._transaction.table_metadata.spec()
        writer = DeleteManifestWriter(
            spec, self.schema(), self.new_manifest_output(), self._snapshot_id, self._compression
        )
        with writer:
            for delete_file in self._delete_files:
                writer.add(
                    ManifestEntry.from_args(
                        status=ManifestEntryStatus.ADDED,
                        snapshot_id=self._snapshot_id,
                        sequence_number=None,
                        file_sequence_number=None,
                        data_file=delete_file,
                    )
                )
        return [*manifests, writer.to_manifest_file()]


def _write_parquet(table: Table, path: str, data: pa.Table) -> int:
    buffer = std_io.BytesIO()
    pq.write_table(data, buffer)
    payload = buffer.getvalue()
    with table.io.new_output(path).create(overwrite=True) as stream:
        stream.write(payload)
    return len(payload)


def add_delete_files(table: Table, category: str) -> list[str]:
    """Commits one position-delete and one equality-delete file against a data file of `category`."""
    data_file = next(task.file for task in table.scan(row_filter=f"category == '{category}'").plan_files())
    base = f"{table.location()}/data/category={category}"
    position_path = f"{base}/pos-deletes-{len(table.metadata.snapshots)}.parquet"
    equality_path = f"{base}/eq-deletes-{len(table.metadata.snapshots)}.parquet"
    position_size = _write_parquet(
        table,
        position_path,
        pa.table({"file_path": [data_file.file_path], "pos": pa.array([0], pa.int64())}),
    )
    equality_size = _write_parquet(table, equality_path, pa.table({"id": pa.array([1], pa.int64())}))
    common: dict[str, Any] = {
        "file_format": FileFormat.PARQUET,
        "partition": Record(category),
        "record_count": 1,
        "spec_id": 0,
    }
    delete_files = [
        DataFile.from_args(
            content=DataFileContent.POSITION_DELETES,
            file_path=position_path,
            file_size_in_bytes=position_size,
            **common,
        ),
        DataFile.from_args(
            content=DataFileContent.EQUALITY_DELETES,
            file_path=equality_path,
            file_size_in_bytes=equality_size,
            equality_ids=[1],
            **common,
        ),
    ]
    with table.transaction() as transaction:
        producer = _AppendDeleteFiles(
            delete_files, operation=Operation.OVERWRITE, transaction=transaction, io=table.io
        )
        producer.commit()
    return [position_path, equality_path]


def add_statistics(table: Table) -> list[str]:
    """A table statistics file and a partition statistics file for the current snapshot."""
    snapshot = table.current_snapshot()
    assert snapshot is not None
    sid = snapshot.snapshot_id
    stats_path = f"{table.location()}/metadata/stats-{sid}.puffin"
    part_path = f"{table.location()}/metadata/partition-stats-{sid}.parquet"
    stats_size = _write_parquet(table, stats_path, pa.table({"x": [1]}))
    part_size = _write_parquet(table, part_path, pa.table({"x": [1]}))
    with table.update_statistics() as update:
        update.set_statistics(
            StatisticsFile(
                snapshot_id=sid,
                statistics_path=stats_path,
                file_size_in_bytes=stats_size,
                file_footer_size_in_bytes=8,
                blob_metadata=[
                    BlobMetadata(
                        type="apache-datasketches-theta-v1", snapshot_id=sid, sequence_number=1, fields=[1]
                    )
                ],
            )
        )
    with table.transaction() as transaction:
        transaction._apply(
            (
                SetPartitionStatisticsUpdate(
                    partition_statistics=PartitionStatisticsFile(
                        snapshot_id=sid, statistics_path=part_path, file_size_in_bytes=part_size
                    )
                ),
            )
        )
    return [stats_path, part_path]


def rich_table(catalog: Catalog, namespace: tuple[str, ...], name: str) -> Table:
    """Appends, overwrite, delete, schema and partition evolution, delete files, statistics, and
    early snapshots expired without file cleanup (as PyIceberg's expire_snapshots leaves them)."""
    table = simple_table(catalog, namespace, name, appends=4)
    early = [snapshot.snapshot_id for snapshot in table.snapshots()[:2]]
    table.overwrite(rows(100, 5, category="c0"), overwrite_filter="category == 'c0'")
    table.delete("category == 'c1'")
    with table.update_schema() as update:
        update.add_column("note", StringType())
    table.append(
        pa.table(
            {
                "id": pa.array([500], pa.int64()),
                "category": ["c2"],
                "note": ["evolved"],
            }
        )
    )
    add_delete_files(table, "c2")
    add_statistics(table)
    with table.update_spec() as update:
        update.add_identity("id")
    table.append(pa.table({"id": pa.array([900], pa.int64()), "category": ["c5"], "note": ["x"]}))
    table.maintenance.expire_snapshots().by_ids(early).commit()
    return catalog.load_table((*namespace, name))
