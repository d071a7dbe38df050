"""The loop `purge watch` follows a purge of either kind with: show each status read, until one
is closed."""

import asyncio
from collections.abc import Awaitable, Callable, Collection
from typing import Protocol, TypeVar


class _Stated(Protocol):
    @property
    def state(self) -> object: ...


StatusT = TypeVar("StatusT", bound=_Stated)


async def follow_until_closed(
    status: Callable[[str], Awaitable[StatusT]],
    purge_id: str,
    current: StatusT,
    show: Callable[[StatusT], None],
    closed_states: Collection[object],
    *,
    interval: float,
) -> StatusT:
    while True:
        show(current)
        if current.state in closed_states:
            return current
        await asyncio.sleep(interval)
        current = await status(purge_id)
