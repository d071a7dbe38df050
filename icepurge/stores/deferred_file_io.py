"""A table's FileIO built at its first read, write or delete, not when the table is loaded.

Why: for s3:// and file:// PyIceberg picks PyArrow's FileIO, and its module imports
pyarrow.dataset and with it pandas and numpy: ~100 MiB of a worker's resident memory, a fifth of
what it held at 10^5 small tables (BENCHMARKS.md, "A worker without PyArrow"). On the stores
icepurge reads and deletes through itself (S3, Azure, GCS, the local disk) a purge uses the
table's FileIO for its properties alone, so there it is never built and PyArrow never imported;
any other store (hdfs://, oss://) builds PyIceberg's own at its first request, as before."""

from __future__ import annotations

import threading

from pyiceberg.io import FileIO, InputFile, OutputFile, load_file_io
from pyiceberg.typedef import EMPTY_DICT, Properties


class DeferredFileIO(FileIO):
    """PyIceberg's FileIO for these properties and location (`load_file_io`'s choice, `py-io-impl`
    included), built once, by the first call that needs it."""

    def __init__(self, properties: Properties = EMPTY_DICT, location: str | None = None) -> None:
        super().__init__(properties)
        self._location = location
        self._lock = threading.Lock()
        self._built: FileIO | None = None

    def __getstate__(self) -> dict[str, object]:
        # A lock doesn't pickle, and a built FileIO's clients belong to this process.
        return {**self.__dict__, "_lock": None, "_built": None}

    def __setstate__(self, state: dict[str, object]) -> None:
        self.__dict__.update(state)
        self._lock = threading.Lock()

    @property
    def built(self) -> bool:
        return self._built is not None

    def _io(self, location: str) -> FileIO:
        with self._lock:
            if self._built is None:
                self._built = load_file_io(self.properties, self._location or location)
            return self._built

    def new_input(self, location: str) -> InputFile:
        return self._io(location).new_input(location)

    def new_output(self, location: str) -> OutputFile:
        return self._io(location).new_output(location)

    def delete(self, location: str | InputFile | OutputFile) -> None:
        uri = location if isinstance(location, str) else location.location
        self._io(uri).delete(location)
