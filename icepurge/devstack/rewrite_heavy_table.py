"""A rewrite-heavy Iceberg table written by PyIceberg's own table API: merge-appends over many
partitions, copy-on-write deletes of single rows, whole-partition deletes, partition
overwrites, and the oldest snapshots expired without file cleanup.

Such a table lists one data file in many manifests (ADDED in one, EXISTING or DELETED in the
rewrites), which is what real tables look like and what a per-listing purge gets wrong."""

from __future__ import annotations

import random
from dataclasses import dataclass, replace

import pyarrow as pa
from pyiceberg.catalog import Catalog
from pyiceberg.partitioning import PartitionField, PartitionSpec
from pyiceberg.schema import Schema
from pyiceberg.table import Table
from pyiceberg.transforms import IdentityTransform
from pyiceberg.types import LongType, NestedField, StringType

from icepurge.catalogs.namespace_creation import ensure_namespace

SCHEMA = Schema(
    NestedField(1, "id", LongType(), required=False),
    NestedField(2, "part", StringType(), required=False),
)
SPEC = PartitionSpec(PartitionField(source_id=2, field_id=1000, transform=IdentityTransform(), name="part"))
# Merging manifests on append rewrites older entries as EXISTING in every new manifest.
PROPERTIES = {"commit.manifest-merge.enabled": "true", "commit.manifest.min-count-to-merge": "4"}


@dataclass(frozen=True)
class RewriteShape:
    partitions: int
    appends: int
    row_deletes: int
    partition_deletes: int
    overwrites: int
    expired: int
    rows_per_file: int = 2
    seed: int = 7
    merge_appends: bool = True

    def __post_init__(self) -> None:
        touched = self.partition_deletes + self.overwrites
        if touched > self.partitions:
            raise ValueError(
                f"partition_deletes + overwrites ({touched}) can't exceed partitions ({self.partitions})"
            )


def _rows(first_id: int, count: int, part: str) -> pa.Table:
    return pa.table(
        {
            "id": pa.array(range(first_id, first_id + count), pa.int64()),
            "part": pa.array([part] * count, pa.string()),
        }
    )


def rewrite_heavy_table(
    catalog: Catalog, namespace: tuple[str, ...], name: str, shape: RewriteShape
) -> Table:
    ensure_namespace(catalog, namespace)
    properties = PROPERTIES if shape.merge_appends else {}
    table = catalog.create_table(
        (*namespace, name), schema=SCHEMA, partition_spec=SPEC, properties=properties
    )
    per_append = shape.partitions * shape.rows_per_file
    for append in range(shape.appends):
        table.append(
            pa.concat_tables(
                _rows(append * per_append + part * shape.rows_per_file, shape.rows_per_file, f"p{part}")
                for part in range(shape.partitions)
            )
        )
    chosen = random.Random(shape.seed)
    for _ in range(shape.row_deletes):
        table.delete(f"id == {chosen.randrange(shape.appends * per_append)}")
    parts = chosen.sample(range(shape.partitions), shape.partition_deletes + shape.overwrites)
    for part in parts[: shape.partition_deletes]:
        table.delete(f"part == 'p{part}'")
    next_id = shape.appends * per_append
    for part in parts[shape.partition_deletes :]:
        table.overwrite(
            _rows(next_id, shape.rows_per_file, f"p{part}"), overwrite_filter=f"part == 'p{part}'"
        )
        next_id += shape.rows_per_file
    oldest = [snapshot.snapshot_id for snapshot in table.snapshots()[: shape.expired]]
    if oldest:
        table.maintenance.expire_snapshots().by_ids(oldest).commit()
    return catalog.load_table((*namespace, name))


def compared_shapes(partitions: int, appends: int) -> dict[str, RewriteShape]:
    """The two shapes the benchmarks set side by side: rewrite-heavy (merge-appends, ten
    copy-on-write row deletes, two partition deletes, three overwrites, five snapshots expired)
    and append-only (the same appends, nothing else)."""
    rewrites = RewriteShape(
        partitions=partitions, appends=appends, row_deletes=10, partition_deletes=2, overwrites=3, expired=5
    )
    plain = replace(
        rewrites, row_deletes=0, partition_deletes=0, overwrites=0, expired=0, merge_appends=False
    )
    return {"rewrite_heavy": rewrites, "append_only": plain}
