"""A purge of a synthetic table through the S3 fault proxy while a loop kills its workers: the
set-up and the outcome the crash-loop tests share (planning's, deletes')."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from pyiceberg.catalog.sql import SqlCatalog
from temporalio.client import Client

from icepurge.api.clients.temporal_client import PurgeClient
from icepurge.contract.status import PurgeStatus
from icepurge.devstack.s3_proxy import FaultPlan, s3_proxy, through_proxy
from icepurge.devstack.stack import EmbeddedStack
from icepurge.devstack.synthetic_table import TableShape, synthetic_table
from tests.purge_helpers import request_for
from tests.store import S3Store

Kills = TypeVar("Kills")


@dataclass(frozen=True)
class CrashLoopPurge:
    """Where the table is, the stack it runs on, the request's options, and how long the purge
    may take."""

    catalog: SqlCatalog
    client: Client
    s3: S3Store
    stack: EmbeddedStack
    queue: str
    bound_seconds: float
    options: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class CrashLoopOutcome(Generic[Kills]):
    owned: set[str]
    left: set[str]
    status: PurgeStatus
    seconds: float
    kills: Kills


async def purge_through_a_crash_loop(
    purge: CrashLoopPurge,
    identifier: tuple[str, str],
    shape: TableShape,
    faults_for: Callable[[FaultPlan], None],
    kill_loop: Callable[[str, FaultPlan, float], Awaitable[Kills]],
) -> CrashLoopOutcome[Kills]:
    """Purges a new table by snapshot through a proxy `faults_for` set up; `kill_loop` (given the
    purge id, the faults and the deadline) kills workers until the purge closes."""
    table = synthetic_table(purge.catalog, identifier, shape)
    owned = purge.s3.list(table.location())
    purges = PurgeClient(purge.client, purge.queue)
    with s3_proxy(purge.stack.ports.s3) as (port, faults):
        faults_for(faults)
        started = time.monotonic()
        purge_id = await purges.start(
            request_for(table, through_proxy(purge.s3.properties, port), **purge.options)
        )
        kills = await kill_loop(purge_id, faults, started + purge.bound_seconds)
        seconds = time.monotonic() - started
    status = await purges.status(purge_id)
    return CrashLoopOutcome(owned, purge.s3.list(table.location()), status, seconds, kills)
