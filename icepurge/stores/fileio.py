"""Any other store PyIceberg's FileIO reads (gs://, hdfs://, oss://, ...): one request per object,
no listing. Adding a store with a bulk API or a listing means adding a file like s3.py."""

from __future__ import annotations

from datetime import UTC, datetime

from pyiceberg.io import FileIO, load_file_io

from icepurge.stores.bulk_deleting import BulkDeleting
from icepurge.stores.fileio_deletes import FileIODeleter
from icepurge.stores.refusals import names_a_refusal
from icepurge.stores.store import ListedPage, ListingUnsupportedError, ObjectHead, StoreContext


class FileIOStore(BulkDeleting):
    def __init__(self, context: StoreContext, sample: str) -> None:
        self._context = context
        self._io: FileIO = context.file_io or load_file_io(context.properties, sample)

    def read(self, uri: str) -> bytes:
        try:
            with self._io.new_input(uri).open(seekable=False) as stream:
                return stream.read()
        except (FileNotFoundError, PermissionError):
            raise
        except OSError as error:
            if names_a_refusal(str(error), uri):
                raise PermissionError(str(error)) from error
            raise

    def write(self, uri: str, data: bytes) -> None:
        with self._io.new_output(uri).create(overwrite=True) as stream:
            stream.write(data)

    def delete(self, uri: str) -> None:
        try:
            self._io.delete(uri)
        except FileNotFoundError:
            return

    def _bulk_deleter(self) -> FileIODeleter:
        return FileIODeleter(self._io, self._context.bulk())

    def list_page(self, prefix: str, token: str | None, limit: int, flat: bool) -> ListedPage:
        raise ListingUnsupportedError(prefix)

    def head(self, uri: str) -> ObjectHead | None:
        found = self._io.new_input(uri)
        if not found.exists():
            return None
        # The FileIO tells no modification time; the epoch says "unknown", never "recent".
        return ObjectHead(size=len(found), modified=datetime.fromtimestamp(0, UTC))
