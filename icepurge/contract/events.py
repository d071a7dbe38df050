"""What a purge tells the systems around it: one event per state change, and throttled progress.

An event's id is stable across replays, retries and continue-as-new, so a receiver that sees an
id twice knows the second one is a redelivery."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Any

from pydantic import Field

from icepurge.contract.identity import identity_of
from icepurge.contract.namespace_status import NamespacePurgeState, NamespacePurgeStatus
from icepurge.contract.states import PurgeState
from icepurge.contract.status import PurgeStatus
from icepurge.contract.strict_model import StrictModel


class EventKind(StrEnum):
    STARTED = "started"
    PROGRESS = "progress"
    COMPLETED = "completed"
    COMPLETED_WITH_ERRORS = "completed_with_errors"
    FAILED = "failed"
    CANCELLED = "cancelled"
    # A step's attempt failed and it is being retried (its error is in `error`).
    RETRYING = "retrying"
    # Soft delete: planned (and dropped), waiting until `scheduled_for` before deleting.
    SCHEDULED = "scheduled"
    UNDROPPED = "undropped"


FINAL_EVENT_KINDS = frozenset(
    {
        EventKind.COMPLETED,
        EventKind.COMPLETED_WITH_ERRORS,
        EventKind.FAILED,
        EventKind.CANCELLED,
        EventKind.UNDROPPED,
    }
)


class PurgeKind(StrEnum):
    TABLE = "table"
    NAMESPACE = "namespace"


class TableTally(StrictModel):
    """A namespace purge's tables so far."""

    total: int
    done: int
    failed: int
    skipped: int
    running: int
    namespaces_dropped: int


class PurgeEvent(StrictModel):
    """Counters and identity only: the request's FileIO properties never get here."""

    purge_kind: PurgeKind = Field(
        PurgeKind.TABLE, description="'namespace': a namespace purge's own event (table is '')."
    )
    tables: TableTally | None = Field(None, description="A namespace purge's tables so far.")

    event_id: str = Field(description="<purge id>:<first run id>:<sequence>; the same on redelivery.")
    sequence: int = Field(description="0, 1, 2, ... in the order the purge emitted its events.")
    kind: EventKind
    purge_id: str
    run_id: str
    catalog: str
    namespace: list[str]
    table: str
    requested_by: str
    request_id: str | None
    state: PurgeState | NamespacePurgeState
    files_total: int
    files_done: int
    files_deleted: int
    files_already_missing: int = Field(
        0, description="Files the purge found gone (the catalog's drop may have deleted them)."
    )
    files_failed: int
    bytes_deleted: int
    chunks_done: int
    chunks_total: int
    rate_files_per_second: float | None
    eta_seconds: float | None
    started_at: datetime | None
    finished_at: datetime | None
    occurred_at: datetime
    error_type: str | None = None
    error: str | None = None
    scheduled_for: datetime | None = None
    guards_not_applied: list[str] = Field(
        default_factory=list,
        description="Each guard the purge runs without, and why: e.g. the live-table guard of a "
        "catalog declared snapshot-only, or one turned off by the request.",
    )
    outcome_note: str | None = Field(
        None, description="A final event: what the counts don't say by themselves (files already gone, why)."
    )


class EventCursor(StrictModel):
    """Where a run's event stream stands; carried through continue-as-new."""

    chain_id: str
    next_sequence: int = 0
    last_progress_at: datetime | None = None


def event_envelope(
    kind: EventKind,
    status: PurgeStatus | NamespacePurgeStatus,
    cursor: EventCursor,
    run_id: str,
    now: datetime,
    **counts: Any,
) -> PurgeEvent:
    """Every event's envelope, a table purge's or a namespace purge's: its id and place in the
    stream, the purge's identity, state and times, and why it failed; `counts` are what the kind
    of purge counts (and any field it says otherwise)."""
    failed = kind is EventKind.FAILED
    envelope: dict[str, Any] = {
        "event_id": f"{status.purge_id}:{cursor.chain_id}:{cursor.next_sequence}",
        "sequence": cursor.next_sequence,
        "kind": kind,
        **identity_of(status),
        "purge_id": status.purge_id,
        "run_id": run_id,
        "state": status.state,
        "eta_seconds": status.eta_seconds,
        "started_at": status.started_at,
        "finished_at": status.finished_at,
        "occurred_at": now,
        "error_type": status.error_type if failed else None,
        "error": status.last_error if failed else None,
    }
    return PurgeEvent(**{**envelope, **counts})


def event_from(
    kind: EventKind, status: PurgeStatus, cursor: EventCursor, run_id: str, now: datetime
) -> PurgeEvent:
    total = status.counts.total()
    retrying = status.retrying if kind is EventKind.RETRYING else None
    counts: dict[str, Any] = {
        "table": status.table,
        "files_total": status.files_total,
        "files_done": status.files_done,
        "files_deleted": total.deleted,
        "files_already_missing": total.already_missing,
        "files_failed": status.failures_total,
        "bytes_deleted": total.bytes_deleted,
        "chunks_done": status.chunks_done,
        "chunks_total": status.chunks_total,
        "rate_files_per_second": status.rate_files_per_second,
        "scheduled_for": status.scheduled_for,
        "guards_not_applied": [
            f"{guard.guard.value}: {guard.detail}" for guard in status.guards if not guard.applied
        ],
        "outcome_note": status.outcome_note,
    }
    if retrying is not None:
        # A retrying step's last error, on the event that says it retries.
        counts["error"] = retrying.last_error
    return event_envelope(kind, status, cursor, run_id, now, **counts)


class TableEvents:
    """A table purge's events, from its status."""

    def __init__(self, status: PurgeStatus) -> None:
        self._status = status

    def event(self, kind: EventKind, cursor: EventCursor, run_id: str, now: datetime) -> PurgeEvent:
        return event_from(kind, self._status, cursor, run_id, now)

    def undelivered(self, count: int) -> None:
        self._status.events_undelivered += count


class EventBatch(StrictModel):
    """The deliver activity's input: events in the order they were emitted."""

    events: list[PurgeEvent]


class DeliveryReport(StrictModel):
    undelivered: dict[str, int] = Field(
        default_factory=dict, description="Events each sink gave up on, by sink name."
    )
