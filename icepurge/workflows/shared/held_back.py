"""A throttle's trailing edge, shared by the workflows that tell their progress at most once an
interval: what the interval held back goes once it is up, by one timer at most."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from datetime import datetime, timedelta

from temporalio import workflow


class HeldBack:
    def __init__(self, interval: timedelta) -> None:
        self._interval = interval
        self._timer: asyncio.Task[None] | None = None

    @property
    def armed(self) -> bool:
        return self._timer is not None

    def left(self, last: datetime | None) -> timedelta:
        """How long until the interval since `last` is up; nothing when nothing was told yet."""
        return last + self._interval - workflow.now() if last else timedelta(0)

    def arm(self, wait: timedelta, tell: Callable[[], Awaitable[None]]) -> None:
        self._timer = asyncio.create_task(self._tell_after(wait, tell))

    def disarm(self) -> bool:
        """Cancels the timer; True if one was armed, whose news the caller must now tell itself."""
        if self._timer is None:
            return False
        self._timer.cancel()
        self._timer = None
        return True

    async def _tell_after(self, wait: timedelta, tell: Callable[[], Awaitable[None]]) -> None:
        await workflow.sleep(wait)
        self._timer = None
        await tell()
