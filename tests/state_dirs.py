"""Where a test session's stack keeps its state: ICEPURGE_TEST_STATE_DIR when set (kept, to be
looked at), else a new temporary folder, removed when the session ends without a failure (a
failed session keeps it: the services' logs say why). Kept folders filled this machine's disk:
each `make test` left two of ~450 MB."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

STATE_DIR_VARIABLE = "ICEPURGE_TEST_STATE_DIR"


@contextmanager
def session_state_dir(failures: Callable[[], int]) -> Iterator[Path]:
    given = os.environ.get(STATE_DIR_VARIABLE)
    root = Path(given or tempfile.mkdtemp(prefix="icepurge-test-"))
    yield root
    if not given and not failures():
        shutil.rmtree(root, ignore_errors=True)
