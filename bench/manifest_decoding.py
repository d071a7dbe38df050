"""What decoding a table's manifests costs, and what a projection would save: every manifest the
purge's planner reads of a `bench.compare_engines` table (its walk, so expired snapshots' too),
fetched once into memory, then decoded three ways, the median of five each:

- blocks: only fastavro's block reader (each block read and inflated, no record decoded);
- icepurge: `parse_manifest_entries`, fastavro's C reader over the writer's schema, every field
  decoded, each entry turned into planning's `ContentFile`;
- projected: fastavro's C reader with a reader schema of the four fields planning reads (status,
  content, file_path, file_size_in_bytes), so the rest is skipped rather than built. No
  `ContentFile` is made, so its saving against icepurge's is an upper bound.

    .venv/bin/python -m bench.manifest_decoding --sizes 6000 20000
"""

from __future__ import annotations

import argparse
import copy
import io
import statistics
import time
from collections.abc import Callable
from typing import Any

from fastavro import block_reader
from fastavro import reader as avro_reader
from pyiceberg.io import load_file_io
from pyiceberg.table import Table

from bench.bench_stack import bench_stack
from bench.bench_stores import S3BenchStore
from bench.compare_engines import table_of
from bench.physical_limit import reachable_files
from icepurge.activities.plan.manifest_reader import parse_manifest_entries
from icepurge.connection.exit_now import run_then_exit

RUNS = 5
PLANNED_ENTRY_FIELDS = ("status", "data_file")
PLANNED_FILE_FIELDS = ("content", "file_path", "file_size_in_bytes")


def _manifests(table: Table, properties: dict[str, str]) -> list[bytes]:
    """Every manifest the purge's planner reads, expired snapshots' included."""
    io_ = load_file_io(properties, table.metadata_location)
    return [io_.new_input(path).open().read() for path in reachable_files(table, properties).manifests]


def _projection(writer_schema: dict[str, Any]) -> dict[str, Any]:
    schema = copy.deepcopy(writer_schema)
    schema["fields"] = [field for field in schema["fields"] if field["name"] in PLANNED_ENTRY_FIELDS]
    for field in schema["fields"]:
        if field["name"] == "data_file":
            field["type"]["fields"] = [
                each for each in field["type"]["fields"] if each["name"] in PLANNED_FILE_FIELDS
            ]
    return schema


def _blocks(data: bytes) -> int:
    return sum(block.num_records for block in block_reader(io.BytesIO(data)))


def _icepurge(data: bytes) -> int:
    return len(parse_manifest_entries("bench", data))


def _projected(data: bytes) -> int:
    writer_schema: Any = avro_reader(io.BytesIO(data)).writer_schema
    schema = _projection(writer_schema)
    return sum(1 for _ in avro_reader(io.BytesIO(data), reader_schema=schema))


def _median_seconds(decode: Callable[[bytes], int], manifests: list[bytes]) -> tuple[float, int]:
    runs = []
    entries = 0
    for _ in range(RUNS):
        started = time.process_time()
        entries = sum(decode(data) for data in manifests)
        runs.append(time.process_time() - started)
    return statistics.median(runs), entries


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", type=int, nargs="+", default=[20_000])
    parser.add_argument("--shapes", nargs="+", default=["append_only", "rewrite_heavy"])
    arguments = parser.parse_args()
    print(
        "| table | manifests | bytes | entries | blocks only | icepurge (all fields) | projected "
        "| icepurge µs an entry | projected / icepurge |\n"
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
        flush=True,
    )
    with bench_stack("icepurge-bench-") as (_, stack):
        store = S3BenchStore(stack)
        for shape in arguments.shapes:
            for size in arguments.sizes:
                table, _ = table_of(store, shape, size)
                manifests = _manifests(table, store.properties)
                blocks, _ = _median_seconds(_blocks, manifests)
                full, entries = _median_seconds(_icepurge, manifests)
                projected, _ = _median_seconds(_projected, manifests)
                print(
                    f"| {shape} {size:,} | {len(manifests):,} | {sum(map(len, manifests)):,} | {entries:,} "
                    f"| {blocks:.3f} s | {full:.3f} s | {projected:.3f} s | {full / entries * 1e6:.1f} "
                    f"| {projected / full:.2f}× |",
                    flush=True,
                )


if __name__ == "__main__":
    run_then_exit(main)
