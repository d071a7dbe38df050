"""A drop with purge: the table leaves the upstream catalog through icepurge's purge by name (load,
plan, drop, then delete: a crash anywhere leaves a purge that finishes or a table still in its
catalog), and the client gets its 204 once the drop happened. A retried DELETE attaches to the
same purge (its id is the table's), or, once the table is gone, finds the purge that dropped it."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass

from icepurge.api.clients.errors import PurgeNotFoundError
from icepurge.api.clients.temporal_client import PurgeClient
from icepurge.api.server.front_door.policy import FrontDoorPolicy
from icepurge.contract.controls import Stage, reached
from icepurge.contract.names import ERROR_TABLE_NOT_FOUND
from icepurge.contract.purge_id import purge_id_for
from icepurge.contract.states import TERMINAL_STATES
from icepurge.contract.status import PurgeStatus
from icepurge.contract.validation import by_name_request

# Between two looks at a purge whose stage could not be waited for in the workflow.
POLL_SECONDS = 0.05


@dataclass(frozen=True)
class DropOutcome:
    """`dropped`: answer 204. Otherwise `code`, `error_type` and `message` in the spec's error model."""

    purge_id: str
    dropped: bool
    code: int = 204
    error_type: str = ""
    message: str = ""


@dataclass(frozen=True)
class TableId:
    catalog: str
    namespace: list[str]
    name: str

    @property
    def dotted(self) -> str:
        return ".".join([*self.namespace, self.name])

    def purge_id(self) -> str:
        """The purge by name's id: the table's, whoever asks."""
        return purge_id_for(
            by_name_request(self.catalog, self.namespace, self.name, requested_by="front-door")
        )


async def dropped_by_its_purge(
    purges: PurgeClient, table: TableId, policy: FrontDoorPolicy
) -> DropOutcome | None:
    """For a DELETE that finds the table gone from the upstream: the answer of the purge of its
    name, when that purge dropped it or is still open. An open purge may have dropped the table
    without having recorded it yet (its drop call is unanswered, its worker died meanwhile): it is
    waited for until it records the drop (204), closes without it, or the wait runs out (503).
    None when no purge of the name dropped the table: the upstream's 404 stands."""
    purge_id = table.purge_id()
    try:
        status = await purges.status(purge_id)
    except PurgeNotFoundError:
        return None
    if status.dropped_at is None and status.state not in TERMINAL_STATES:
        status = await wait_for_stage(purges, purge_id, Stage.DROPPED, policy.drop_wait_seconds)
    if status.dropped_at is not None:
        return DropOutcome(purge_id, dropped=True)
    if status.state in TERMINAL_STATES:
        return None
    return _retry_later(
        purge_id,
        f"purge {purge_id} is dropping {table.dotted} and has not recorded the drop yet "
        f"({status.state}); retry the DELETE",
    )


async def drop_with_purge(
    purges: PurgeClient, table: TableId, requested_by: str, policy: FrontDoorPolicy
) -> DropOutcome:
    deadline = time.monotonic() + policy.drop_wait_seconds
    purge_id, status = await purges.purge_by_name_until(
        table.catalog,
        table.namespace,
        table.name,
        Stage.DROPPED,
        policy.drop_wait_seconds,
        requested_by=requested_by,
        options=policy.purge_options(),
    )
    if status is None:
        try:
            status = await wait_for_stage(purges, purge_id, Stage.DROPPED, deadline - time.monotonic())
        except PurgeNotFoundError:
            return _retry_later(purge_id, f"purge {purge_id} could not be started yet; retry the DELETE")
    if status.dropped_at is not None:
        return DropOutcome(purge_id, dropped=True)
    return not_yet(purge_id, status, "dropped the table")


def not_yet(purge_id: str, status: PurgeStatus, step: str) -> DropOutcome:
    """A purge that closed without the step, or is still on its way to it (503: retry)."""
    if status.state in TERMINAL_STATES:
        return not_dropped(purge_id, status)
    return _retry_later(purge_id, f"purge {purge_id} has not {step} yet ({status.state}); retry the DELETE")


def _retry_later(purge_id: str, message: str) -> DropOutcome:
    return DropOutcome(purge_id, False, 503, "ServiceUnavailableException", message)


async def wait_for_stage(purges: PurgeClient, purge_id: str, stage: Stage, seconds: float) -> PurgeStatus:
    """The purge's status once it reached `stage` or closed, or when `seconds` ran out. Waited
    for inside the workflow; polled only when that wait can't be placed."""
    deadline = time.monotonic() + seconds
    while True:
        left = deadline - time.monotonic()
        waited = await purges.await_stage(purge_id, stage, max(left, 0.001))
        status = waited or await purges.status(purge_id)
        if reached(status, stage) or time.monotonic() >= deadline:
            return status
        await asyncio.sleep(POLL_SECONDS)


async def rehearse_drop(
    purges: PurgeClient, table: TableId, requested_by: str, policy: FrontDoorPolicy
) -> str:
    """Dry-run-only mode: a dry run of the purge, planned while the table is still in its catalog;
    the caller then passes the drop to the upstream. Returns the dry run's id (planned, or ended
    without a plan: the upstream's answer to the drop tells the client why)."""
    purge_id = await purges.purge_by_name(
        table.catalog, table.namespace, table.name, requested_by=requested_by, options=policy.purge_options()
    )
    await wait_for_stage(purges, purge_id, Stage.PLANNED, policy.drop_wait_seconds)
    return purge_id


def not_dropped(purge_id: str, status: PurgeStatus) -> DropOutcome:
    reason = status.last_error or f"the purge ended {status.state} before the drop"
    if status.error_type == ERROR_TABLE_NOT_FOUND:
        return DropOutcome(purge_id, False, 404, "NoSuchTableException", reason)
    return DropOutcome(purge_id, False, 409, "CommitFailedException", f"purge {purge_id}: {reason}")
