"""The API's Temporal client, connected on first use: the API starts, and answers 503, while
Temporal is down. A refusal (a certificate or an API key Temporal doesn't take) is kept for a few
seconds and answered again without reconnecting: requests arriving meanwhile don't each knock."""

from __future__ import annotations

import asyncio
import time

from temporalio.client import Client
from temporalio.service import RPCError

from icepurge.api.clients.errors import PurgeServiceUnavailableError
from icepurge.api.clients.temporal_client import PurgeClient
from icepurge.connection.connect import connect
from icepurge.connection.errors import TemporalConfigError, TemporalRefusedError, TemporalUnreachableError
from icepurge.connection.rpc_retry import once_more_if_cut
from icepurge.connection.settings import TemporalSettings

CONNECT_TIMEOUT_SECONDS = 5.0
REFUSAL_KEPT_SECONDS = 5.0


class TemporalConnection:
    def __init__(self, settings: TemporalSettings) -> None:
        self._settings = settings
        self._client: Client | None = None
        self._lock = asyncio.Lock()
        self._refused: tuple[float, str] | None = None

    async def client(self) -> Client:
        async with self._lock:
            if self._client is None:
                if self._refused is not None and time.monotonic() - self._refused[0] < REFUSAL_KEPT_SECONDS:
                    raise PurgeServiceUnavailableError(self._refused[1])
                self._client = await self._connect()
            return self._client

    async def _connect(self) -> Client:
        try:
            return await asyncio.wait_for(connect(self._settings), CONNECT_TIMEOUT_SECONDS)
        except (TemporalRefusedError, TemporalConfigError) as refused:
            self._refused = (time.monotonic(), str(refused))
            raise PurgeServiceUnavailableError(str(refused)) from None
        except TemporalUnreachableError as error:
            raise PurgeServiceUnavailableError(f"{error}; retry shortly") from None
        except (RuntimeError, OSError, TimeoutError):
            raise PurgeServiceUnavailableError(
                f"Temporal at {self._settings.temporal_address} is unreachable; retry shortly"
            ) from None

    async def purges(self) -> PurgeClient:
        return PurgeClient(await self.client(), self._settings.task_queue)

    async def unready(self) -> str | None:
        """Why the API can't serve purges now, or None when Temporal answers its health check."""
        try:
            client = await self.client()
            healthy = await once_more_if_cut(client.service_client.check_health)
        except PurgeServiceUnavailableError as error:
            return str(error)
        except (RPCError, RuntimeError) as error:
            return f"Temporal's health check failed ({type(error).__name__}); retry shortly"
        return None if healthy else "Temporal says it is not serving; retry shortly"
