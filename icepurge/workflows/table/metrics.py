"""icepurge's file counters, recorded by the workflow when a chunk or finalize completes.

The workflow's meter skips replays, and a step completes once in history, so each file is
counted once however often workers die or retry."""

from __future__ import annotations

from temporalio import workflow

from icepurge.contract.counts import FileCounts


def record_step(counts: FileCounts, throttled_requests: int) -> None:
    meter = workflow.metric_meter()
    files = meter.create_counter("icepurge_files", "Files a purge handled, by category and outcome.")
    deleted_bytes = meter.create_counter("icepurge_deleted_bytes", "Bytes of deleted files.", "bytes")
    throttled = meter.create_counter(
        "icepurge_throttled_retries", "Delete requests the store throttled, then retried."
    )
    for category, outcome in counts.by_category.items():
        by_outcome = {
            "deleted": outcome.deleted,
            "already_missing": outcome.already_missing,
            "failed": outcome.failed,
            **{f"skipped_{reason}": count for reason, count in outcome.skipped.items()},
        }
        for name, count in by_outcome.items():
            if count:
                files.add(count, {"category": str(category), "outcome": name})
        if outcome.bytes_deleted:
            deleted_bytes.add(outcome.bytes_deleted, {"category": str(category)})
    if throttled_requests:
        throttled.add(throttled_requests)
