"""A namespace purge's own events (started, throttled progress, the final one), in the same
envelope as a table purge's, so every sink and listener takes both."""

from __future__ import annotations

from datetime import datetime

from icepurge.contract.events import EventCursor, EventKind, PurgeEvent, PurgeKind, TableTally, event_envelope
from icepurge.contract.namespace_status import NamespacePurgeStatus


class NamespaceEvents:
    def __init__(self, status: NamespacePurgeStatus) -> None:
        self._status = status

    def event(self, kind: EventKind, cursor: EventCursor, run_id: str, now: datetime) -> PurgeEvent:
        status = self._status
        files = status.files
        elapsed = (now - status.started_at).total_seconds() if status.started_at else 0.0
        return event_envelope(
            kind,
            status,
            cursor,
            run_id,
            now,
            purge_kind=PurgeKind.NAMESPACE,
            table="",
            files_total=files.planned,
            files_done=files.done,
            files_deleted=files.deleted,
            files_failed=files.failed,
            bytes_deleted=files.bytes_deleted,
            chunks_done=0,
            chunks_total=0,
            rate_files_per_second=round(files.done / elapsed, 2) if elapsed > 0 else None,
            tables=TableTally(
                total=status.tables_total,
                done=status.tables_done,
                failed=status.tables_failed,
                skipped=status.tables_skipped,
                running=status.tables_running,
                namespaces_dropped=status.namespaces_dropped,
            ),
        )

    def undelivered(self, count: int) -> None:
        self._status.events_undelivered += count
