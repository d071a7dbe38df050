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
from pyiceberg.table import Table

from icepurge.activities.plan.reach_walk import VERSION_HINT, ReachableFiles, WalkReading, reach
from icepurge.devstack.requests import request_for_table

READS_IN_FLIGHT = 16


@dataclass(frozen=True)
class ReadLimit:
    objects: int
    seconds: float


def _read(io: FileIO, location: str) -> bytes:
    with io.new_input(location).open() as stream:
        return stream.read()


def reachable_files(table: Table, properties: dict[str, str]) -> ReachableFiles:
    """What the purge's planner walk finds: older metadata files, manifest lists, manifests."""
    io = load_file_io(properties, table.metadata_location)
    request = request_for_table("bench", table, properties, "bench")
    return reach(io, table.metadata, request, WalkReading(READS_IN_FLIGHT, lambda: None))


def metadata_objects(table: Table, properties: dict[str, str]) -> list[str]:
    """What a purge of the table reads, as its planner walks them: the current metadata file,
    older metadata files, manifest lists, manifests (the version hint is only looked for)."""
    reachable = reachable_files(table, properties)
    older = [location for location in reachable.metadata if not location.endswith("/" + VERSION_HINT)]
    return [table.metadata_location, *older, *reachable.manifest_lists, *reachable.manifests]


def read_limit(paths: list[str], properties: dict[str, str]) -> ReadLimit:
    """Every object fetched once, READS_IN_FLIGHT at a time, on a FileIO made beforehand."""
    io = load_file_io(properties, paths[0])
    with ThreadPoolExecutor(READS_IN_FLIGHT) as pool:
        started = time.perf_counter()
        list(pool.map(lambda location: _read(io, location), paths))
        return ReadLimit(len(paths), time.perf_counter() - started)
