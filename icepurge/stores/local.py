"""The local disk (file:// and bare paths): plain file operations, deletes unlinked in slices."""

from __future__ import annotations

import bisect
import os
import tempfile
from datetime import UTC, datetime
from pathlib import Path

from icepurge.stores.bulk_deleting import BulkDeleting
from icepurge.stores.local_deletes import LocalBulkDeleter, local_path
from icepurge.stores.store import Listed, ListedPage, ObjectHead, StoreContext


def _uri(path: str) -> str:
    return "file://" + path


def _modified(stat: os.stat_result) -> datetime:
    return datetime.fromtimestamp(stat.st_mtime, UTC)


class LocalStore(BulkDeleting):
    def __init__(self, context: StoreContext) -> None:
        self._context = context

    def read(self, uri: str) -> bytes:
        return Path(local_path(uri)).read_bytes()

    def write(self, uri: str, data: bytes) -> None:
        """Whole or not at all: a crash mid-write leaves the old object, never half of the new."""
        target = Path(local_path(uri))
        target.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(
            dir=target.parent, prefix=f".{target.name}.", delete=False
        ) as staged:
            staged.write(data)
        os.replace(staged.name, target)

    def delete(self, uri: str) -> None:
        Path(local_path(uri)).unlink(missing_ok=True)

    def _bulk_deleter(self) -> LocalBulkDeleter:
        return LocalBulkDeleter(self._context.bulk())

    def list_page(self, prefix: str, token: str | None, limit: int, flat: bool) -> ListedPage:
        """Paths in sorted order; the token is the last path of the page before."""
        root = local_path(prefix).rstrip("/")
        files, folders = self._level(root) if flat else (self._tree(root), [])
        start = bisect.bisect_right(files, token) if token else 0
        page = files[start : start + limit]
        objects = [Listed(_uri(path), _modified(os.stat(path))) for path in page]
        following = page[-1] if start + limit < len(files) and page else None
        return ListedPage(objects=objects, folders=[_uri(path) for path in folders], next_token=following)

    def head(self, uri: str) -> ObjectHead | None:
        try:
            stat = os.stat(local_path(uri))
        except FileNotFoundError:
            return None
        return ObjectHead(size=stat.st_size, modified=_modified(stat))

    @staticmethod
    def _tree(root: str) -> list[str]:
        return sorted(os.path.join(folder, name) for folder, _, names in os.walk(root) for name in names)

    @staticmethod
    def _level(root: str) -> tuple[list[str], list[str]]:
        try:
            entries = list(os.scandir(root))
        except FileNotFoundError:
            return [], []
        files = sorted(entry.path for entry in entries if entry.is_file())
        return files, sorted(entry.path for entry in entries if entry.is_dir())
