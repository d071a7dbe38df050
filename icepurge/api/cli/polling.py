"""The loop `purge watch` follows a purge of either kind with: show each status read, until one
is closed."""

import asyncio
from collections.abc import Awaitable, Callable
from typing import TypeVar

StatusT = TypeVar("StatusT")


async def follow_until_closed(
    current: StatusT,
    fetch: Callable[[], Awaitable[StatusT]],
    show: Callable[[StatusT], None],
    closed: Callable[[StatusT], bool],
    interval: float,
) -> StatusT:
    while True:
        show(current)
        if closed(current):
            return current
        await asyncio.sleep(interval)
        current = await fetch()
