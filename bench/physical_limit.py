"""A purge's physical limit on a store: the raw time to fetch every metadata object the purge must
read (the current metadata file, every older one its log reaches, every snapshot's manifest list
in them, every manifest those list), 16 reads in flight and no parsing, plus the raw bulk delete
of the table's distinct objects. Nothing that reads or deletes those objects can beat their sum
by more than the overlap of the two."""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from pyiceberg.io import FileIO, load_file_io
from pyiceberg.manifest import ManifestFile
from pyiceberg.table import Table
from pyiceberg.table.metadata import TableMetadata

from icepurge.activities.metadata_reader import parse_metadata
from icepurge.stores.addresses import normalize

READS_IN_FLIGHT = 16


@dataclass(frozen=True)
class ReadLimit:
    objects: int
    seconds: float


def _read(io: FileIO, location: str) -> bytes:
    with io.new_input(location).open() as stream:
        return stream.read()


def _metadata_files(io: FileIO, table: Table) -> dict[str, TableMetadata]:
    """Every metadata file the log reaches, breadth first, as the planner walks it."""
    found: dict[str, TableMetadata] = {table.metadata_location: table.metadata}
    level = [entry.metadata_file for entry in table.metadata.metadata_log]
    seen = {normalize(location) for location in [table.metadata_location, *level]}
    while level:
        following: list[str] = []
        for location in level:
            metadata = parse_metadata(_read(io, location), location)
            found[location] = metadata
            for entry in metadata.metadata_log:
                if normalize(entry.metadata_file) not in seen:
                    seen.add(normalize(entry.metadata_file))
                    following.append(entry.metadata_file)
        level = following
    return found


def metadata_objects(table: Table, properties: dict[str, str]) -> list[str]:
    """What a purge of the table reads: metadata files, manifest lists, manifests."""
    io = load_file_io(properties, table.metadata_location)
    metadata_files = _metadata_files(io, table)
    lists = {
        snapshot.manifest_list: snapshot
        for metadata in metadata_files.values()
        for snapshot in metadata.snapshots
        if snapshot.manifest_list
    }
    manifests: dict[str, None] = {}
    for snapshot in lists.values():
        manifest: ManifestFile
        for manifest in snapshot.manifests(io):
            manifests.setdefault(manifest.manifest_path, None)
    return [*metadata_files, *lists, *manifests]


def read_limit(paths: list[str], properties: dict[str, str]) -> ReadLimit:
    """Every object fetched once, READS_IN_FLIGHT at a time, on a FileIO made beforehand."""
    io = load_file_io(properties, paths[0])
    with ThreadPoolExecutor(READS_IN_FLIGHT) as pool:
        started = time.perf_counter()
        list(pool.map(lambda location: _read(io, location), paths))
        return ReadLimit(len(paths), time.perf_counter() - started)
