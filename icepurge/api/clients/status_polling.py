"""Waiting for a purge to close over HTTP, where there is no workflow result to block on."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Collection
from typing import TypeVar

from icepurge.api.clients.errors import PurgeFailedError
from icepurge.contract.namespace_status import NamespacePurgeStatus
from icepurge.contract.status import PurgeStatus

StatusT = TypeVar("StatusT", PurgeStatus, NamespacePurgeStatus)
_UNFINISHED = ("FAILED", "CANCELLED")


async def closed_status(
    purge_id: str,
    read: Callable[[], Awaitable[StatusT]],
    terminal: Collection[object],
    poll_seconds: float,
) -> tuple[StatusT, float]:
    """The closed purge's status and its duration in seconds; PurgeFailedError when it ended
    FAILED or CANCELLED."""
    while True:
        status = await read()
        if status.state in terminal:
            break
        await asyncio.sleep(poll_seconds)
    if status.state.value in _UNFINISHED:
        reason = status.last_error or status.state.value.lower()
        raise PurgeFailedError(purge_id, status.state.value, reason, status.error_type)
    finished, started = status.finished_at, status.started_at
    return status, (finished - started).total_seconds() if finished and started else 0.0
