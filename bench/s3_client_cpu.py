"""The CPU an S3 client spends per request, in this process, against the embedded SeaweedFS: the
boto3 client icepurge uses (icepurge.stores.s3_client), obstore (Rust's object_store) and
PyArrow's S3 filesystem (what PyIceberg's FileIO reads through), in one run on the same objects.
Requests go one at a time from one thread, so CPU per request is the process's CPU time (every
thread, obstore's runtime included) over the requests; SeaweedFS's own CPU is not in it.

    .venv/bin/python -m bench.s3_client_cpu --requests 400

aiobotocore is not measured: its newest release pins a botocore older than the one the project's
boto3 needs, so the two can't share an environment (uv says so when it resolves them together)."""

from __future__ import annotations

import argparse
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from urllib.parse import urlsplit

import obstore
from obstore.store import S3Store
from pyarrow import fs

from bench.bench_stack import bench_stack
from icepurge.connection.exit_now import run_then_exit
from icepurge.stores.s3_client import s3_client
from icepurge.stores.s3_signed_deletes import signed_deletes

# A small table's metadata objects are a few KiB each.
OBJECT_BYTES = 4096
SMALL_BATCH = 10
FULL_BATCH = 1000


@dataclass(frozen=True)
class Client:
    name: str
    get: Callable[[str], bytes]
    put: Callable[[str, bytes], None]
    # Deletes the keys with as few requests as the client can; returns the requests it sent.
    delete: Callable[[Sequence[str]], int]


def boto3_client(properties: dict[str, str], bucket: str) -> Client:
    client = s3_client(properties, max_connections=16, max_attempts=3)

    def delete(keys: Sequence[str]) -> int:
        client.delete_objects(Bucket=bucket, Delete={"Objects": [{"Key": key} for key in keys]})
        return 1

    return Client(
        "boto3",
        lambda key: client.get_object(Bucket=bucket, Key=key)["Body"].read(),
        lambda key, data: client.put_object(Bucket=bucket, Key=key, Body=data) and None,
        delete,
    )


def obstore_client(properties: dict[str, str], bucket: str) -> Client:
    store = S3Store(
        bucket,
        endpoint=properties["s3.endpoint"],
        access_key_id=properties["s3.access-key-id"],
        secret_access_key=properties["s3.secret-access-key"],
        region=properties.get("s3.region", "us-east-1"),
        client_options={"allow_http": True},
    )

    def delete(keys: Sequence[str]) -> int:
        obstore.delete(store, list(keys))
        return 1

    return Client(
        "obstore",
        lambda key: obstore.get(store, key).bytes().to_bytes(),
        lambda key, data: obstore.put(store, key, data) and None,
        delete,
    )


def signed_client(properties: dict[str, str], bucket: str) -> Client:
    """What icepurge sends where the properties carry credentials and an endpoint: obstore's GETs
    and PUTs, and its own signed DeleteObjects (icepurge/stores/s3_signed_deletes.py)."""
    objects = obstore_client(properties, bucket)
    sender = signed_deletes(properties, connections=16)

    def delete(keys: Sequence[str]) -> int:
        sender.delete_objects(bucket, list(keys))
        return 1

    return Client("obstore + signed DeleteObjects", objects.get, objects.put, delete)


def pyarrow_client(properties: dict[str, str], bucket: str) -> Client:
    endpoint = urlsplit(properties["s3.endpoint"])
    filesystem = fs.S3FileSystem(
        access_key=properties["s3.access-key-id"],
        secret_key=properties["s3.secret-access-key"],
        endpoint_override=endpoint.netloc,
        scheme=endpoint.scheme,
        region=properties.get("s3.region", "us-east-1"),
    )

    def get(key: str) -> bytes:
        with filesystem.open_input_file(f"{bucket}/{key}") as stream:
            return bytes(stream.read())

    def put(key: str, data: bytes) -> None:
        with filesystem.open_output_stream(f"{bucket}/{key}") as stream:
            stream.write(data)

    def delete(keys: Sequence[str]) -> int:
        # PyArrow's filesystem has no bulk delete: one DeleteObject a key.
        for key in keys:
            filesystem.delete_file(f"{bucket}/{key}")
        return len(keys)

    return Client("pyarrow", get, put, delete)


@dataclass(frozen=True)
class Figure:
    cpu_ms: float
    wall_ms: float


def measured(work: Callable[[], int]) -> Figure:
    """`work` returns how many units it did; the figure is per unit."""
    cpu, wall = time.process_time(), time.perf_counter()
    units = work()
    return Figure(
        (time.process_time() - cpu) * 1000 / units,
        (time.perf_counter() - wall) * 1000 / units,
    )


def run(client: Client, seed: Client, requests: int) -> dict[str, Figure]:
    prefix = f"{client.name}-{uuid.uuid4().hex[:8]}"
    keys = [f"{prefix}/put/{index:06d}" for index in range(requests)]
    data = bytes(OBJECT_BYTES)
    # Warm: connections open, models loaded.
    for key in keys[:10]:
        client.put(key, data)
        client.get(key)

    def puts() -> int:
        for key in keys:
            client.put(key, data)
        return len(keys)

    def gets() -> int:
        for key in keys:
            client.get(key)
        return len(keys)

    small = [keys[start : start + SMALL_BATCH] for start in range(0, len(keys), SMALL_BATCH)]

    def small_deletes() -> int:
        sent = sum(client.delete(batch) for batch in small)
        return sent

    full_keys = [f"{prefix}/bulk/{index:06d}" for index in range(FULL_BATCH)]
    for key in full_keys:
        seed.put(key, b"x")

    def full_delete() -> int:
        client.delete(full_keys)
        return len(full_keys)

    return {
        f"PUT {OBJECT_BYTES // 1024} KiB": measured(puts),
        f"GET {OBJECT_BYTES // 1024} KiB": measured(gets),
        f"delete {SMALL_BATCH} keys (per request)": measured(small_deletes),
        f"delete {FULL_BATCH:,} keys (per key)": measured(full_delete),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--requests", type=int, default=400)
    args = parser.parse_args()
    with bench_stack("icepurge-s3-client-cpu-") as (_, stack):
        properties = stack.s3_properties
        bucket = f"clients-{uuid.uuid4().hex[:8]}"
        s3_client(properties, max_connections=16, max_attempts=3).create_bucket(Bucket=bucket)
        seed = boto3_client(properties, bucket)
        clients = [
            boto3_client(properties, bucket),
            obstore_client(properties, bucket),
            signed_client(properties, bucket),
            pyarrow_client(properties, bucket),
        ]
        figures = {client.name: run(client, seed, args.requests) for client in clients}
    operations = list(figures["boto3"])
    print(f"{args.requests} requests each, one at a time: this process's CPU ms (wall ms), CPU vs boto3")
    print("| operation | " + " | ".join(client.name for client in clients) + " |")
    print("| --- |" + " ---: |" * len(clients))
    for operation in operations:
        base = figures["boto3"][operation].cpu_ms
        cells = [
            f"{figure.cpu_ms:.3f} ({figure.wall_ms:.2f}) {figure.cpu_ms / base:.2f}×"
            for figure in (figures[client.name][operation] for client in clients)
        ]
        print(f"| {operation} | " + " | ".join(cells) + " |")
    print("pyarrow's deletes are one DeleteObject a key (its filesystem has no bulk delete)")


if __name__ == "__main__":
    run_then_exit(main)
