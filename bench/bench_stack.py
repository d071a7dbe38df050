"""The embedded stack a benchmark runs on: free ports, its state in a new temporary folder."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from icepurge.devstack.ports import StackPorts
from icepurge.devstack.stack import EmbeddedStack
from icepurge.worker.settings import WorkerSettings


@contextmanager
def bench_stack(prefix: str) -> Iterator[tuple[Path, EmbeddedStack]]:
    """The run's folder and its started stack, stopped on the way out. The services' logs are
    kept, as they explain an odd figure; their data goes (a 1,000-table run left ~750 MB, and
    kept runs filled this machine's disk until SeaweedFS failed a bench's writes)."""
    root = Path(tempfile.mkdtemp(prefix=prefix))
    # Benchmarks name a catalog per contender, none of them configured.
    stack = EmbeddedStack(state_dir=root / "stack", ports=StackPorts.free(), snapshot_only_catalogs=("*",))
    stack.start()
    try:
        yield root, stack
    finally:
        stack.stop()
        for entry in (root / "stack").iterdir():
            if entry.is_dir() and entry.name != "logs":
                shutil.rmtree(entry)
            elif entry.is_file():
                entry.unlink()


def bench_worker_settings(stack: EmbeddedStack, queue: str, activity_slots: int = 8) -> WorkerSettings:
    """A worker on the stack, in this process: no event sinks, whose lines would come between the
    figures the benchmark prints."""
    return WorkerSettings(
        temporal_address=stack.temporal_address,
        state_location=stack.worker_env()["ICEPURGE_STATE_LOCATION"],
        state_io_properties=stack.s3_properties,
        task_queue=queue,
        codec_keys=stack.codec_keys,
        max_concurrent_activities=activity_slots,
        event_sinks=[],
    )
