"""The API's Temporal client, connected on first use: the API starts, and answers 503, while
Temporal is down."""

from __future__ import annotations

import asyncio

from temporalio.client import Client
from temporalio.service import RPCError

from icepurge.api.clients.errors import PurgeServiceUnavailableError
from icepurge.api.clients.temporal_client import PurgeClient
from icepurge.connection.connect import connect
from icepurge.connection.settings import TemporalSettings

CONNECT_TIMEOUT_SECONDS = 5.0


class TemporalConnection:
    def __init__(self, settings: TemporalSettings) -> None:
        self._settings = settings
        self._client: Client | None = None
        self._lock = asyncio.Lock()

    async def client(self) -> Client:
        async with self._lock:
            if self._client is None:
                try:
                    self._client = await asyncio.wait_for(connect(self._settings), CONNECT_TIMEOUT_SECONDS)
                except (RuntimeError, OSError, TimeoutError):
                    raise PurgeServiceUnavailableError(
                        f"Temporal at {self._settings.temporal_address} is unreachable; retry shortly"
                    ) from None
            return self._client

    async def purges(self) -> PurgeClient:
        return PurgeClient(await self.client(), self._settings.task_queue)

    async def ready(self) -> bool:
        try:
            return await (await self.client()).service_client.check_health()
        except (PurgeServiceUnavailableError, RPCError, RuntimeError):
            return False
