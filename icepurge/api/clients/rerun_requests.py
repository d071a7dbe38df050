"""What a rerun of a purge by name runs, read from its history: once its table left the catalog,
the snapshot its load step returned; while its table is still held (options.hold_namespace; the
catalog's drop of it never happened), a purge by name of the held table. Never the hold again:
the old identifier may name another table by now."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from temporalio.client import WorkflowHandle
from temporalio.converter import DataConverter

from icepurge.contract.catalog_steps import LoadedTable
from icepurge.contract.express_steps import DroppedPlan, LoadedPlan
from icepurge.contract.names import (
    DROP_TABLE_ACTIVITY,
    LOAD_AND_PLAN_ACTIVITY,
    LOAD_PLAN_AND_DROP_ACTIVITY,
    LOAD_TABLE_ACTIVITY,
)
from icepurge.contract.status import PurgeStatus

_LOAD_RESULTS: dict[str, type[LoadedTable] | type[LoadedPlan] | type[DroppedPlan]] = {
    LOAD_TABLE_ACTIVITY: LoadedTable,
    LOAD_AND_PLAN_ACTIVITY: LoadedPlan,
    LOAD_PLAN_AND_DROP_ACTIVITY: DroppedPlan,
}
_DROP_STEPS = frozenset({DROP_TABLE_ACTIVITY, LOAD_PLAN_AND_DROP_ACTIVITY})


class NoLoadedSnapshotError(Exception):
    """The purge dropped its table but its history holds no load step's result."""


@dataclass(frozen=True)
class _Steps:
    completed: set[str]
    loaded: LoadedTable | None


async def rerun_request(
    handle: WorkflowHandle[Any, Any], converter: DataConverter, request: dict[str, Any], status: PurgeStatus
) -> dict[str, Any]:
    """`request`: the purge's own (by name); `status`: its last."""
    if status.dropped_at is None:
        return request
    steps = await _steps(handle, converter)
    if status.held_as is not None and not _DROP_STEPS & steps.completed:
        namespace, table = status.held_as.rsplit(".", 1)
        # The guard compares with the whole catalog: the held table's own namespace is the hold.
        options = {**request.get("options", {}), "hold_namespace": None, "overlap_scope": "catalog"}
        return {**request, "namespace": [namespace], "table": table, "options": options}
    if steps.loaded is None:
        raise NoLoadedSnapshotError(f"purge {handle.id} has no loaded snapshot in its history")
    properties = {**steps.loaded.file_io_properties, **request.get("file_io_properties", {})}
    return {**request, "metadata_location": steps.loaded.metadata_location, "file_io_properties": properties}


async def _steps(handle: WorkflowHandle[Any, Any], converter: DataConverter) -> _Steps:
    """The activities that completed, and the table the first load step loaded."""
    scheduled: dict[int, str] = {}
    completed: set[str] = set()
    loaded: LoadedTable | None = None
    async for event in handle.fetch_history_events():
        if event.HasField("activity_task_scheduled_event_attributes"):
            scheduled[event.event_id] = event.activity_task_scheduled_event_attributes.activity_type.name
        elif event.HasField("activity_task_completed_event_attributes"):
            attributes = event.activity_task_completed_event_attributes
            name = scheduled.get(attributes.scheduled_event_id, "")
            completed.add(name)
            if loaded is None and name in _LOAD_RESULTS:
                decoded = await converter.decode(attributes.result.payloads[:1], [_LOAD_RESULTS[name]])
                result = decoded[0]
                loaded = result if isinstance(result, LoadedTable) else result.loaded
    return _Steps(completed, loaded)
