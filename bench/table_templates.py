"""Benchmark tables generated once and restored before each contender, byte for byte at the
same paths, so every contender purges the very same table."""

from __future__ import annotations

import os
import shutil
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Protocol
from urllib.parse import urlsplit

if TYPE_CHECKING:
    from mypy_boto3_s3 import S3Client


class TableTemplate(Protocol):
    objects: int

    def restore(self) -> None: ...

    def remaining(self) -> int: ...


class S3Template:
    """Every object under the table's location, kept in memory (tiny synthetic objects)."""

    def __init__(self, client: S3Client, location: str) -> None:
        parts = urlsplit(location)
        self._client, self._bucket, self._prefix = client, parts.netloc, parts.path.lstrip("/") + "/"
        keys = self._keys()
        with ThreadPoolExecutor(32) as pool:
            bodies = pool.map(
                lambda key: client.get_object(Bucket=self._bucket, Key=key)["Body"].read(), keys
            )
            self._objects = dict(zip(keys, bodies, strict=True))
        self.objects = len(self._objects)

    def kept_keys(self) -> list[str]:
        return list(self._objects)

    def _keys(self) -> list[str]:
        pages = self._client.get_paginator("list_objects_v2").paginate(
            Bucket=self._bucket, Prefix=self._prefix
        )
        return [item["Key"] for page in pages for item in page.get("Contents", [])]

    def restore(self) -> None:
        with ThreadPoolExecutor(32) as pool:
            list(
                pool.map(
                    lambda item: self._client.put_object(Bucket=self._bucket, Key=item[0], Body=item[1]),
                    self._objects.items(),
                )
            )

    def remaining(self) -> int:
        return len(self._keys())


def _files(root: Path) -> list[Path]:
    return [Path(folder, name) for folder, _, names in os.walk(root) for name in names]


class DiskTemplate:
    """A hard-linked copy of the table's directory: restoring links the files back."""

    def __init__(self, location: str, keep: Path) -> None:
        self._table = Path(urlsplit(location).path)
        self._keep = keep
        shutil.copytree(self._table, keep, copy_function=os.link)
        self.objects = len(_files(keep))

    def restore(self) -> None:
        shutil.rmtree(self._table, ignore_errors=True)
        shutil.copytree(self._keep, self._table, copy_function=os.link)

    def remaining(self) -> int:
        return len(_files(self._table)) if self._table.exists() else 0
