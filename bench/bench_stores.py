"""The stores the engine comparison runs on, each with what the benchmark needs of it: a catalog
writing there, a fast writer of tiny objects, a template to restore a table between contenders,
the FileIO properties a purge gets, and the raw ceiling (its bulk delete, no metadata work)."""

from __future__ import annotations

import os
import time
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, TypeVar
from urllib.parse import urlsplit

from pyiceberg.catalog.sql import SqlCatalog

from bench.purge_throughput import bulk_delete_ceiling
from bench.table_templates import DiskTemplate, S3Template, TableTemplate
from icepurge.devstack.azurite import AzuriteEndpoint
from icepurge.devstack.stack import EmbeddedStack
from icepurge.devstack.synthetic_table import OBJECT_BODY
from icepurge.stores.azure_deletes import AZURE_BATCH
from icepurge.stores.blob_address import blob_address
from icepurge.stores.s3_client import s3_client

T = TypeVar("T")
CEILING_THREADS = 8
WRITE_THREADS = 32


def _in_parallel(write_one: Callable[[T], object], items: list[T]) -> None:
    with ThreadPoolExecutor(WRITE_THREADS) as pool:
        list(pool.map(write_one, items))


class BenchStore(Protocol):
    name: str
    catalog: SqlCatalog
    properties: dict[str, str]

    def write_objects(self, paths: list[str]) -> None: ...

    def template(self, location: str) -> TableTemplate: ...

    def ceiling(self, count: int) -> float: ...


@dataclass
class S3BenchStore:
    stack: EmbeddedStack
    name: str = "SeaweedFS"

    def __post_init__(self) -> None:
        self.catalog = self.stack.catalog("bench")
        self.properties = self.stack.s3_properties
        self._client = s3_client(self.properties, max_connections=40)

    def write_objects(self, paths: list[str]) -> None:
        def put(uri: str) -> None:
            parts = urlsplit(uri)
            self._client.put_object(Bucket=parts.netloc, Key=parts.path.lstrip("/"), Body=OBJECT_BODY)

        _in_parallel(put, paths)

    def template(self, location: str) -> TableTemplate:
        return S3Template(self._client, location)

    def ceiling(self, count: int) -> float:
        return bulk_delete_ceiling(self.stack, count)


class AzureTemplate:
    """Every blob under the table's location, kept in memory (tiny synthetic objects)."""

    def __init__(self, endpoint: AzuriteEndpoint, location: str) -> None:
        address = blob_address(location.rstrip("/") + "/")
        self._container = endpoint.service().get_container_client(address.container)
        self._prefix = address.name
        names = self._names()
        with ThreadPoolExecutor(WRITE_THREADS) as pool:
            bodies = pool.map(lambda name: self._container.download_blob(name).readall(), names)
            self._blobs = dict(zip(names, bodies, strict=True))
        self.objects = len(self._blobs)

    def _names(self) -> list[str]:
        return [blob.name for blob in self._container.list_blobs(name_starts_with=self._prefix)]

    def restore(self) -> None:
        with ThreadPoolExecutor(WRITE_THREADS) as pool:
            list(
                pool.map(
                    lambda item: self._container.upload_blob(item[0], item[1], overwrite=True),
                    self._blobs.items(),
                )
            )

    def remaining(self) -> int:
        return len(self._names())


@dataclass
class AzureBenchStore:
    endpoint: AzuriteEndpoint
    state_dir: Path
    container: str = "warehouse"
    name: str = "Azurite"

    def __post_init__(self) -> None:
        self.properties = self.endpoint.properties()
        self.catalog = SqlCatalog(
            "bench-azure",
            uri=f"sqlite:///{self.state_dir / 'azure-catalog.sqlite'}",
            warehouse=self.endpoint.location(self.container, "bench"),
            **self.properties,
        )
        self._container = self.endpoint.service().get_container_client(self.container)

    def write_objects(self, paths: list[str]) -> None:
        _in_parallel(
            lambda uri: self._container.upload_blob(blob_address(uri).name, OBJECT_BODY, overwrite=True),
            paths,
        )

    def template(self, location: str) -> TableTemplate:
        return AzureTemplate(self.endpoint, location)

    def ceiling(self, count: int) -> float:
        """Blobs/s of Blob Batch deletes (256 a request, 8 threads), no metadata work at all."""
        names = [f"ceiling/{uuid.uuid4().hex[:8]}/{index:07d}.parquet" for index in range(count)]
        _in_parallel(lambda name: self._container.upload_blob(name, OBJECT_BODY, overwrite=True), names)
        batches = [names[start : start + AZURE_BATCH] for start in range(0, count, AZURE_BATCH)]
        started = time.perf_counter()
        with ThreadPoolExecutor(CEILING_THREADS) as pool:
            # A batch the SDK retried after a timeout answers 404 for the blobs its first try deleted.
            list(pool.map(self._delete_batch, batches))
        return count / (time.perf_counter() - started)

    def _delete_batch(self, names: list[str]) -> None:
        self._container.delete_blobs(*names, raise_on_any_failure=False)


@dataclass
class DiskBenchStore:
    root: Path
    name: str = "local disk"

    def __post_init__(self) -> None:
        self.properties: dict[str, str] = {}
        self.catalog = SqlCatalog(
            "disk",
            uri=f"sqlite:///{self.root / 'disk-catalog.sqlite'}",
            warehouse=(self.root / "disk").as_uri(),
        )

    def write_objects(self, paths: list[str]) -> None:
        def write(uri: str) -> None:
            path = Path(urlsplit(uri).path)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(OBJECT_BODY)

        _in_parallel(write, paths)

    def template(self, location: str) -> TableTemplate:
        return DiskTemplate(location, self.root / f"template-{uuid.uuid4().hex[:6]}")

    def ceiling(self, count: int) -> float:
        """Files/s of plain unlink on 8 threads, with no metadata work at all."""
        directory = self.root / f"ceiling-{uuid.uuid4().hex[:6]}"
        directory.mkdir(parents=True)
        paths = [directory / f"{index:07d}.parquet" for index in range(count)]
        _in_parallel(lambda path: path.write_bytes(OBJECT_BODY), paths)
        started = time.perf_counter()
        with ThreadPoolExecutor(CEILING_THREADS) as pool:
            list(pool.map(os.unlink, paths))
        return count / (time.perf_counter() - started)
