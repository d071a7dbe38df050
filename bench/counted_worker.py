"""`icepurge worker` that counts its S3 requests by what sent them, for finding which of a small
table's requests are the table's own (its metadata, manifests, deletes) and which are icepurge's
state. Every second it writes the counts so far to $ICEPURGE_COUNT_FILE as JSON
({"GET by attempt_fence._fenced_attempt": 561, ...}). Only the obstore reads and writes and the
signed DeleteObjects are counted: the S3 path the namespace bench takes. Counting walks each
request's stack, so the worker's rates and CPU mean nothing then.

    ICEPURGE_COUNT_FILE=/tmp/counts.json .venv/bin/python -m bench.counted_worker"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from icepurge.connection.exit_now import run_then_exit

COUNT_FILE = "ICEPURGE_COUNT_FILE"
WRITE_SECONDS = 1.0
# Frames that only carry a request: the one that names its purpose is the first frame outside them.
_CARRIERS = ("/icepurge/stores/", "/state/state_store.py", "/plan/object_reads.py", "/plan/read_retry.py")


def _sender(frame: Any) -> str:
    while frame is not None:
        path = frame.f_code.co_filename
        name = frame.f_code.co_name
        carried = any(carrier in path for carrier in _CARRIERS)
        if "/icepurge/" in path and not carried and name != "<lambda>":
            return f"{Path(path).stem}.{name}"
        frame = frame.f_back
    return "a pool thread"


def _counting(counts: Counter[str], lock: threading.Lock, verb: str, method: Callable[..., Any]) -> Any:
    def counted(*args: Any, **kwargs: Any) -> Any:
        label = f"{verb} by {_sender(sys._getframe(1))}"
        with lock:
            counts[label] += 1
        return method(*args, **kwargs)

    return counted


def _keep_writing(counts: Counter[str], lock: threading.Lock, path: Path) -> None:
    while True:
        with lock:
            text = json.dumps(dict(counts))
        written = path.with_suffix(".tmp")
        written.write_text(text)
        written.replace(path)
        time.sleep(WRITE_SECONDS)


def main() -> None:
    from icepurge.stores.s3_obstore import ObstoreObjects
    from icepurge.stores.s3_signed_deletes import SignedDeleteObjects

    counts: Counter[str] = Counter()
    lock = threading.Lock()
    for owner, method, verb in (
        (ObstoreObjects, "get", "GET"),
        (ObstoreObjects, "put", "PUT"),
        (ObstoreObjects, "head", "HEAD"),
        (SignedDeleteObjects, "delete_objects", "DeleteObjects"),
    ):
        setattr(owner, method, _counting(counts, lock, verb, getattr(owner, method)))
    path = Path(os.environ[COUNT_FILE])
    threading.Thread(target=_keep_writing, args=(counts, lock, path), daemon=True).start()
    from icepurge.api.cli.main import main as icepurge

    sys.argv = ["icepurge", "worker"]
    icepurge()


if __name__ == "__main__":
    run_then_exit(main)
