"""Finalize: manifests (every chunk has deleted their entries), manifest lists, statistics, older
metadata, the current metadata file last; then the report object, then the plan's objects are
removed."""

from __future__ import annotations

from collections.abc import Callable

from pydantic import BaseModel, ConfigDict, Field

from activities.bulk_delete import ObjectStore, RequestStats
from activities.chunk_deleter import ChunkOutcome, chunk_outcome_uri
from activities.locations import parent_dir
from activities.plan_model import Plan, UnreadableFile, content_chunk_uri
from activities.state_store import StateStore
from workflows.constants import FAILURE_SAMPLE_SIZE
from workflows.counts import Category, FileCounts, SkipReason
from workflows.status import FileFailure
from workflows.steps import FinalizeResult

# With content deletes failed, a re-run needs the whole chain down to the manifests that list
# the failed files (which manifests those are is not kept, so all of them stay).
KEPT_FOR_RETRY = frozenset({Category.MANIFESTS, Category.MANIFEST_LISTS, Category.METADATA_FILES})
# Files per delete call, so finalize heartbeats in time whatever the table.
SLICE = 8_000


class PurgeReportObject(BaseModel):
    """The report object in the state location: what the workflow result can't carry."""

    model_config = ConfigDict(extra="forbid")

    purge_id: str
    metadata_location: str
    dry_run: bool
    counts: FileCounts
    failures: list[FileFailure] = Field(default_factory=list)
    would_delete: list[str] = Field(default_factory=list)
    skipped_foreign: list[str] = Field(default_factory=list)
    unreadable: list[UnreadableFile] = Field(default_factory=list)
    finalize: FinalizeResult | None = Field(
        None, description="Finalize's own result, returned again if finalize is retried after it."
    )


def report_uri(plan_uri: str) -> str:
    return f"{parent_dir(plan_uri)}/report.json"


def finalize(
    *,
    plan: Plan,
    plan_uri: str,
    chunk_count: int,
    store: ObjectStore,
    state: StateStore,
    dry_run: bool,
    keep_metadata_chain: bool,
    counts_so_far: FileCounts,
    beat: Callable[[], None],
) -> FinalizeResult:
    counts = FileCounts()
    stats = RequestStats()
    failures: list[FileFailure] = []
    would_delete: list[str] = []
    for category, paths in plan.finalize_groups():
        bucket = counts.of(category)
        reason = (
            SkipReason.DRY_RUN
            if dry_run
            else SkipReason.KEPT_FOR_RETRY
            if keep_metadata_chain and category in KEPT_FOR_RETRY
            else None
        )
        if reason is not None:
            bucket.skipped[reason] = bucket.skipped.get(reason, 0) + len(paths)
            if dry_run:
                would_delete.extend(paths)
            continue
        for start in range(0, len(paths), SLICE):
            result = store.delete(paths[start : start + SLICE])
            stats.add(result)
            bucket.deleted += len(result.deleted)
            bucket.already_missing += len(result.missing)
            bucket.failed += len(result.failed)
            failures.extend(
                FileFailure(path=path, category=category, error=error) for path, error in result.failed
            )
            beat()

    report = PurgeReportObject(
        purge_id=plan.purge_id,
        metadata_location=plan.metadata_location,
        dry_run=dry_run,
        counts=counts_so_far.model_copy(deep=True),
        skipped_foreign=[file.path for file in plan.foreign_files],
        unreadable=plan.unreadable,
    )
    report.counts.add(counts)
    chunk_uris = [chunk_outcome_uri(plan_uri, index) for index in range(chunk_count)]
    for uri in chunk_uris:
        saved = state.read(uri)
        if saved:
            chunk = ChunkOutcome.model_validate_json(saved)
            report.failures.extend(chunk.failures)
            report.would_delete.extend(chunk.would_delete)
        beat()
    report.failures.extend(failures)
    report.would_delete.extend(would_delete)
    location = report_uri(plan_uri)
    report.finalize = FinalizeResult(
        counts=counts,
        failures_total=len(failures),
        failure_sample=failures[:FAILURE_SAMPLE_SIZE],
        report_location=location,
        delete_requests=stats.requests,
        throttled_requests=stats.throttled,
    )
    state.write(location, report)
    content_uris = [content_chunk_uri(plan_uri, index) for index in range(len(plan.content_chunks))]
    for uri in [*chunk_uris, *content_uris, plan_uri]:
        state.delete(uri)
    return report.finalize


def finalized_before(state: StateStore, plan_uri: str) -> FinalizeResult | None:
    """The result of a finalize that completed but whose activity result was lost."""
    saved = state.read(report_uri(plan_uri))
    return PurgeReportObject.model_validate_json(saved).finalize if saved else None
