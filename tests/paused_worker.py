"""A worker process that freezes itself at a chosen moment: after SIGUSR1, its next write to the
state location stops the whole process (SIGSTOP: the SDK's threads as well as the activity's)
just before the write, as a stop-the-world pause or a frozen VM would, until SIGCONT. Run as
`python -m tests.paused_worker`; it logs FROZEN_AT_WRITE as it freezes."""

from __future__ import annotations

import asyncio
import logging
import signal
import threading
from typing import Any

from icepurge.connection.exit_now import run_then_exit
from icepurge.state.state_store import StateStore
from icepurge.worker.run import serve
from icepurge.worker.settings import WorkerSettings

FROZEN_AT_WRITE = "freezing before a state write"
log = logging.getLogger("tests.paused_worker")

_armed = threading.Event()
_write = StateStore.write


def _freezing_write(self: StateStore, uri: str, *args: Any, **kwargs: Any) -> None:
    if _armed.is_set():
        _armed.clear()
        log.warning("%s of %s", FROZEN_AT_WRITE, uri)
        # Sent to this thread: it stops as the call returns. Sent to the process, the main
        # thread takes it and stops the others a moment later, while this one may already be
        # past the write's fence check (a pause there is the window the fence can't close).
        signal.pthread_kill(threading.get_ident(), signal.SIGSTOP)
    _write(self, uri, *args, **kwargs)


if __name__ == "__main__":
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s %(message)s")
    StateStore.write = _freezing_write  # type: ignore[method-assign]
    signal.signal(signal.SIGUSR1, lambda *_: _armed.set())
    run_then_exit(lambda: asyncio.run(serve(WorkerSettings())))
