"""`icepurge worker` with tracemalloc on, for finding what a long purge's worker keeps: each SIGUSR2
writes a snapshot to $ICEPURGE_TRACE_DIR (000.snapshot, 001.snapshot, ...), and
bench.memory_growth compares two. Tracing slows the worker; its rates mean nothing.

    ICEPURGE_TRACE_DIR=/tmp/trace .venv/bin/python -m bench.traced_worker"""

from __future__ import annotations

import itertools
import os
import signal
import sys
import tracemalloc
from pathlib import Path
from types import FrameType

from icepurge.connection.exit_now import run_then_exit

TRACE_DIR = "ICEPURGE_TRACE_DIR"
FRAMES = 16


def main() -> None:
    folder = Path(os.environ[TRACE_DIR])
    folder.mkdir(parents=True, exist_ok=True)
    numbers = itertools.count()
    tracemalloc.start(FRAMES)

    def snapshot(signum: int, frame: FrameType | None) -> None:
        tracemalloc.take_snapshot().dump(str(folder / f"{next(numbers):03d}.snapshot"))

    signal.signal(signal.SIGUSR2, snapshot)
    # Imported once tracing runs, so that the worker's modules are traced from their start too.
    from icepurge.api.cli.main import main as icepurge

    sys.argv = ["icepurge", "worker"]
    icepurge()


if __name__ == "__main__":
    run_then_exit(main)
