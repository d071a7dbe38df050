"""A synthetic rewrite-heavy table at any size, fast: the manifest-level shape merge-appends and
copy-on-write rewrites leave, written with PyIceberg's manifest writers over tiny real objects.

Every snapshot adds a manifest of new files. Every `merge_every` manifests are merged into one
that lists the earlier files again as EXISTING, so a file is listed by many reachable manifests.
Every `rewrite_every`-th snapshot rewrites a tenth of the live files copy-on-write: DELETED
entries for them, their replacements ADDED. The oldest `expired` snapshots are expired without
file cleanup, so what only they reached is found through older metadata files alone."""

from __future__ import annotations

import random
import uuid
from dataclasses import dataclass

from pyiceberg.catalog import Catalog
from pyiceberg.manifest import (
    DataFileContent,
    ManifestEntry,
    ManifestEntryStatus,
    ManifestFile,
    write_manifest,
)
from pyiceberg.partitioning import UNPARTITIONED_PARTITION_SPEC
from pyiceberg.table import Table
from pyiceberg.table.snapshots import Operation

from icepurge.catalogs.namespace_creation import ensure_namespace
from icepurge.devstack.iceberg_writers import ReplaceManifests
from icepurge.devstack.synthetic_table import SCHEMA, ObjectWriter, content_file


@dataclass(frozen=True)
class RewriteHeavyShape:
    distinct_files: int
    snapshots: int = 20
    merge_every: int = 4
    rewrite_every: int = 5
    expired: int = 5
    seed: int = 7


@dataclass(frozen=True)
class _Entry:
    path: str
    snapshot: int


def synthetic_rewrite_heavy_table(
    catalog: Catalog, identifier: tuple[str, ...], shape: RewriteHeavyShape, write_objects: ObjectWriter
) -> Table:
    ensure_namespace(catalog, identifier[:-1])
    table = catalog.create_table(identifier, schema=SCHEMA, partition_spec=UNPARTITIONED_PARTITION_SPEC)
    io, location, batch = table.io, table.location(), uuid.uuid4().hex[:8]
    snapshot_ids = [table.metadata.new_snapshot_id() for _ in range(shape.snapshots)]
    rewrites = sum(1 for s in range(shape.snapshots) if s % shape.rewrite_every == shape.rewrite_every - 1)
    # Each rewrite replaces a tenth of what is live then; new files per snapshot fill the rest.
    per_snapshot = max(1, int(shape.distinct_files / (shape.snapshots + rewrites * shape.snapshots / 20)))
    chosen = random.Random(shape.seed)
    written = 0

    def fresh(count: int, snapshot: int) -> list[_Entry]:
        nonlocal written
        paths = [f"{location}/data/{batch}-{written + n:07d}.parquet" for n in range(count)]
        written += count
        return [_Entry(path, snapshot) for path in paths]

    def manifest(name: str, snapshot: int, entries: list[tuple[_Entry, ManifestEntryStatus]]) -> ManifestFile:
        writer = write_manifest(
            format_version=2,
            spec=UNPARTITIONED_PARTITION_SPEC,
            schema=SCHEMA,
            output_file=io.new_output(f"{location}/metadata/{batch}-{name}.avro"),
            snapshot_id=snapshot_ids[snapshot],
            avro_compression="deflate",
        )
        with writer:
            for entry, status in entries:
                added = status is ManifestEntryStatus.ADDED
                existing = status is ManifestEntryStatus.EXISTING
                writer.add(
                    ManifestEntry.from_args(
                        status=status,
                        snapshot_id=snapshot_ids[entry.snapshot if existing else snapshot],
                        # Commits number sequences from 1; ADDED entries inherit theirs.
                        sequence_number=None if added else entry.snapshot + 1,
                        file_sequence_number=None if added else entry.snapshot + 1,
                        data_file=content_file(entry.path, DataFileContent.DATA),
                    )
                )
        return writer.to_manifest_file()

    live: list[_Entry] = []
    current: list[ManifestFile] = []
    for snapshot in range(shape.snapshots):
        added = fresh(per_snapshot, snapshot)
        statuses = [(entry, ManifestEntryStatus.ADDED) for entry in added]
        rewrite = snapshot % shape.rewrite_every == shape.rewrite_every - 1 and bool(live)
        if rewrite:
            removed = set(chosen.sample(range(len(live)), max(1, len(live) // 10)))
            gone = [live[index] for index in sorted(removed)]
            live = [entry for index, entry in enumerate(live) if index not in removed]
            replacements = fresh(len(gone), snapshot)
            added += replacements
            statuses += [(entry, ManifestEntryStatus.DELETED) for entry in gone]
            statuses += [(entry, ManifestEntryStatus.ADDED) for entry in replacements]
        if rewrite or len(current) + 1 >= shape.merge_every:
            # Merged (or rewritten): one manifest lists every earlier live file again.
            existing = [(entry, ManifestEntryStatus.EXISTING) for entry in live]
            current = [manifest(f"m{snapshot:04d}", snapshot, existing + statuses)]
        else:
            current.append(manifest(f"a{snapshot:04d}", snapshot, statuses))
        live += added
        with table.transaction() as transaction:
            operation = Operation.OVERWRITE if len(current) == 1 else Operation.APPEND
            producer = ReplaceManifests(list(current), operation=operation, transaction=transaction, io=io)
            producer._snapshot_id = snapshot_ids[snapshot]
            producer.commit()
    write_objects([f"{location}/data/{batch}-{index:07d}.parquet" for index in range(written)])
    if shape.expired:
        table = catalog.load_table(identifier)
        table.maintenance.expire_snapshots().by_ids(snapshot_ids[: shape.expired]).commit()
    return catalog.load_table(identifier)
