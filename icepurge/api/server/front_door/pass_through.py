"""A drop with purge in pass-through mode: the upstream authorizes the caller's own credentials for
the load and for the drop, so the front door does both itself, around a purge of the snapshot it
loaded that deletes nothing until told the drop happened (options.await_drop_seconds).

The order keeps each promise through a crash: the purge is recorded before the drop (a front door
that dies after the drop leaves a purge; the client's retry finds and confirms it); the purge
deletes nothing before the confirmation (a front door that dies before the drop leaves the table
in its catalog and a purge that ends DropUnconfirmed with nothing deleted); one snapshot is one
purge id (a retry attaches to it)."""

from __future__ import annotations

import asyncio
import contextlib
import json
from typing import Protocol

from icepurge.api.clients.errors import PurgeControlRejectedError, PurgeNotFoundError
from icepurge.api.clients.listing import PurgeFilter
from icepurge.api.clients.temporal_client import PurgeClient
from icepurge.api.server.front_door.drops import DropOutcome, TableId, not_yet, wait_for_stage
from icepurge.api.server.front_door.policy import FrontDoorPolicy
from icepurge.api.server.front_door.proxy import Call, Forwarded
from icepurge.catalogs.io_properties import file_io_properties
from icepurge.contract.controls import DropConfirmation, Stage
from icepurge.contract.request import PurgeRequest
from icepurge.contract.states import TERMINAL_STATES, PurgeState
from icepurge.stores.registry import open_store
from icepurge.stores.store import StoreContext

REQUESTED_BY = "front-door:pass-through"
# Newest purges of a table looked at when a retried drop finds the table gone.
_LOOKBACK = 5


def snapshot_request(
    table: TableId, loaded: dict[str, object], catalog_properties: dict[str, str], policy: FrontDoorPolicy
) -> PurgeRequest:
    """The purge of what the caller's load returned: its metadata location, and FileIO properties
    from the catalog's configuration overlaid with what the upstream vended for this table."""
    vended = loaded.get("config")
    properties = {
        **file_io_properties(catalog_properties),
        **(file_io_properties(vended) if isinstance(vended, dict) else {}),
    }
    options = {
        **policy.purge_options(),
        "drop_before_plan": False,
        "await_drop_seconds": policy.confirm_drop_seconds,
    }
    return PurgeRequest.model_validate(
        {
            "catalog": table.catalog,
            "namespace": table.namespace,
            "table": table.name,
            "metadata_location": loaded["metadata-location"],
            "file_io_properties": properties,
            "requested_by": REQUESTED_BY,
            "options": options,
        }
    )


async def _started(purges: PurgeClient, request: PurgeRequest) -> str:
    """The snapshot's purge. One that closed before its table's drop (the upstream refused an
    earlier caller, or no caller confirmed the drop) deleted nothing and would refuse every later
    drop of the table: it starts again. One that closed after its drop keeps its result."""
    outcome = await purges.begin(request)
    if outcome.closed is None:
        return outcome.purge_id
    status = await purges.status(outcome.purge_id)
    if status.dropped_at is None and status.counts.total().deleted == 0:
        return await purges.start_again(request)
    return outcome.purge_id


async def planned(purges: PurgeClient, purge_id: str, policy: FrontDoorPolicy) -> DropOutcome | None:
    """Waits until the purge's plan is recorded (it then awaits the drop); an outcome when it can't."""
    status = await wait_for_stage(purges, purge_id, Stage.PLANNED, policy.drop_wait_seconds)
    if status.state is PurgeState.DROPPING or status.dropped_at is not None:
        return None
    return not_yet(purge_id, status, "planned the table")


async def confirm(purges: PurgeClient, purge_id: str, request: PurgeRequest) -> None:
    """Tells the purge its table left the catalog. A purge already told (by a concurrent retry of
    the same drop) may have finished meanwhile: that one is confirmed already."""
    gone = await asyncio.to_thread(_storage_gone, request)
    try:
        await purges.confirm_drop(purge_id, DropConfirmation(storage_gone=gone))
    except PurgeNotFoundError:
        if (await purges.status(purge_id)).dropped_at is None:
            raise


async def awaiting_purge(purges: PurgeClient, table: TableId) -> tuple[str, bool] | None:
    """For a retried drop that finds the table gone: this front door's purge of it (id, and
    whether it still awaits the drop's confirmation), if there is one. Any purge still open
    without a recorded drop awaits it, whatever its step: the drop that took the table may have
    come before its plan was recorded (upstream_keeps_storage drops at once)."""
    found = await purges.list(
        PurgeFilter(
            catalog=table.catalog, namespace=table.namespace, table=table.name, requested_by=REQUESTED_BY
        ),
        page_size=_LOOKBACK,
    )
    for summary in found.items:
        status = await purges.status(summary.purge_id)
        if status.dropped_at is not None:
            return summary.purge_id, False
        if status.state not in TERMINAL_STATES:
            return summary.purge_id, True
    return None


class CallersDoor(Protocol):
    """The front door's side of a caller's call: the catalog's policy and properties, and the
    upstream it forwards to."""

    @property
    def policy(self) -> FrontDoorPolicy: ...

    @property
    def catalog_properties(self) -> dict[str, str]: ...

    async def send(self, call: Call) -> Forwarded: ...


async def drop_as_caller(
    purges: PurgeClient, door: CallersDoor, call: Call, table: TableId
) -> tuple[Forwarded | DropOutcome, str | None]:
    """The upstream's own answer when it refuses the caller (with the purge's id once there is
    one), or the drop's outcome."""
    send, policy = door.send, door.policy
    loaded = await send(Call("GET", call.path, headers=call.headers))
    if loaded.status == 404:
        return await _retried(purges, table, loaded)
    snapshot = loaded_table(loaded)
    if snapshot is None:
        return loaded, None
    request = snapshot_request(table, snapshot, door.catalog_properties, policy)
    purge_id = await _started(purges, request)
    if not policy.upstream_keeps_storage:
        unplanned = await planned(purges, purge_id, policy)
        if unplanned is not None:
            return unplanned, purge_id
    # A plain drop: the upstream must not purge inline what icepurge is about to.
    dropped = await send(Call("DELETE", call.path, "purgeRequested=false", call.headers))
    if dropped.status == 404:
        # Gone since the load: a concurrent retry of this drop got there first, and may have
        # confirmed this purge already; cancelling it would stop the deletes it was told to make.
        await confirm(purges, purge_id, request)
        return DropOutcome(purge_id, dropped=True), purge_id
    if dropped.status not in (200, 204):
        # The upstream kept the table, so its purge must not go on; one that closed already (a
        # start that found this snapshot's purge finished) has nothing to stop.
        with contextlib.suppress(PurgeControlRejectedError):
            await purges.cancel(purge_id)
        return dropped, purge_id
    await confirm(purges, purge_id, request)
    return DropOutcome(purge_id, dropped=True), purge_id


async def _retried(
    purges: PurgeClient, table: TableId, gone: Forwarded
) -> tuple[Forwarded | DropOutcome, str | None]:
    """The table is gone: a drop retried after one that dropped it and died before confirming
    (or answering) finds its purge; anything else is the upstream's 404."""
    found = await awaiting_purge(purges, table)
    if found is None:
        return gone, None
    purge_id, awaiting = found
    if awaiting:
        request = await purges.request(purge_id)
        await confirm(purges, purge_id, request)
    return DropOutcome(purge_id, dropped=True), purge_id


def loaded_table(answer: Forwarded) -> dict[str, object] | None:
    """The LoadTableResult of a 200, else None."""
    if answer.status != 200:
        return None
    body = json.loads(answer.body)
    return body if isinstance(body, dict) and isinstance(body.get("metadata-location"), str) else None


def _storage_gone(request: PurgeRequest) -> bool:
    """Some catalogs delete a table's storage on drop (S3 Tables): its metadata file is gone."""
    location = request.snapshot_location()
    store = open_store(location, StoreContext(request.file_io_properties))
    return store.head(location) is None
