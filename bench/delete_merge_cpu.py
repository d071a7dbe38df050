"""What lever 3's merged deletes could save (issue 44): a small table's 13 files go out a phase
at a time (its data files, then manifests, manifest lists, older metadata files, the current
metadata file last: bench.small_purge_requests counts 6 DeleteObjects a table, one more than
these phases); a batch of 8 tables could send each phase's keys of all 8 in one. Both ways
delete the same kind of keys of the embedded SeaweedFS in one run, rounds interleaved; the
figures are CPU a table: SeaweedFS's (every process of it) and this process's (the boto3 client
icepurge deletes with, 8 threads as a batch has).

    .venv/bin/python -m bench.delete_merge_cpu --batches 100 --rounds 3
"""

from __future__ import annotations

import argparse
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING

import psutil

from bench.bench_stack import bench_stack
from icepurge.connection.exit_now import run_then_exit
from icepurge.stores.s3_client import s3_client

if TYPE_CHECKING:
    from mypy_boto3_s3 import S3Client

BUCKET = "warehouse"
# A small table of three appends: 3 data files, 3 manifests, 3 manifest lists, 3 older metadata
# files and the current one (PlanModel.finalize_groups' order after the content chunk).
PHASES = (3, 3, 3, 3, 1)
TABLES_PER_BATCH = 8
WRITE_THREADS = 32


@dataclass(frozen=True)
class Figures:
    store_cpu_ms: float
    client_cpu_ms: float
    requests: float


def _store_cpu(store: psutil.Process) -> float:
    used = 0.0
    for process in (store, *store.children(recursive=True)):
        times = process.cpu_times()
        used += times.user + times.system
    return used


def _table_phases(batch: str, table: int) -> list[list[str]]:
    keys = iter(f"merge/{batch}/t{table}/{index:02d}.parquet" for index in range(sum(PHASES)))
    return [[next(keys) for _ in range(size)] for size in PHASES]


def _requests(batch: str, merged: bool) -> list[list[list[str]]]:
    """Per thread, its DeleteObjects in order: a thread a table, or one thread a batch."""
    tables = [_table_phases(batch, table) for table in range(TABLES_PER_BATCH)]
    if not merged:
        return tables
    return [[[key for phases in tables for key in phases[phase]] for phase in range(len(PHASES))]]


def measure(client: S3Client, store: psutil.Process, batches: int, merged: bool) -> Figures:
    work = [_requests(uuid.uuid4().hex[:8], merged) for _ in range(batches)]
    keys = [key for batch in work for thread in batch for request in thread for key in request]
    with ThreadPoolExecutor(WRITE_THREADS) as pool:
        list(pool.map(lambda key: client.put_object(Bucket=BUCKET, Key=key, Body=b"x"), keys))

    def send(requests: list[list[str]]) -> int:
        for request in requests:
            client.delete_objects(
                Bucket=BUCKET, Delete={"Objects": [{"Key": key} for key in request], "Quiet": True}
            )
        return len(requests)

    store_before, client_before = _store_cpu(store), time.process_time()
    sent = 0
    with ThreadPoolExecutor(TABLES_PER_BATCH) as pool:
        for batch in work:
            sent += sum(pool.map(send, batch))
    tables = batches * TABLES_PER_BATCH
    return Figures(
        (_store_cpu(store) - store_before) * 1000 / tables,
        (time.process_time() - client_before) * 1000 / tables,
        sent / tables,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--batches", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=3)
    arguments = parser.parse_args()
    with bench_stack("icepurge-bench-delete-merge-") as (_, stack):
        store = next(
            process for process in psutil.Process().children(recursive=True) if "weed" in process.name()
        )
        client = s3_client(stack.s3_properties, max_connections=TABLES_PER_BATCH + 2, max_attempts=1)
        print(f"{arguments.batches} batches of {TABLES_PER_BATCH} tables of {sum(PHASES)} files a round")
        print("| round | deletes | DeleteObjects a table | SeaweedFS CPU a table | client CPU a table |")
        print("|---|---|---:|---:|---:|")
        for round_number in range(1, arguments.rounds + 1):
            for merged in (False, True):
                figures = measure(client, store, arguments.batches, merged)
                name = "merged across the batch" if merged else "a table's own"
                print(
                    f"| {round_number} | {name} | {figures.requests:.2f} | "
                    f"{figures.store_cpu_ms:.2f} ms | {figures.client_cpu_ms:.2f} ms |"
                )


if __name__ == "__main__":
    run_then_exit(main)
