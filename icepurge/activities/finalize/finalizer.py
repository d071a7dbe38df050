"""Finalize: manifests (every chunk has deleted their entries), manifest lists, statistics, older
metadata, the current metadata file last; then the report object, then the plan's objects are
removed.

Finalize checkpoints to its own object after every slice of deletes, so a retried attempt (a
killed worker) resumes where the last one stopped instead of starting over; a retried attempt's
first slices are smaller (retried_groups.py)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from pydantic import Field

from icepurge.activities.delete.chunk_deleter import ChunkOutcome, chunk_outcome_uri
from icepurge.activities.delete.object_store import ObjectStore
from icepurge.activities.delete.retried_groups import group_sizes, retried
from icepurge.activities.plan.plan_model import (
    Plan,
    UnreadableFile,
    content_chunk_uri,
    context_uri,
    emitted_uri,
    pending_part_uri,
    reach_partial_uri,
    spill_part_uris,
)
from icepurge.catalogs.locations import parent_dir
from icepurge.contract.counts import Category, FileCounts, SkipReason
from icepurge.contract.express_steps import ExpressSteps
from icepurge.contract.names import FAILURE_SAMPLE_SIZE
from icepurge.contract.status import FileFailure, GuardOutcome
from icepurge.contract.steps import FinalizeResult
from icepurge.contract.strict_model import StrictModel
from icepurge.state.state_store import StateStore

# With content deletes failed, a re-run needs the whole chain down to the manifests that list
# the failed files (which manifests those are is not kept, so all of them stay).
KEPT_FOR_RETRY = frozenset({Category.MANIFESTS, Category.MANIFEST_LISTS, Category.METADATA_FILES})
# Files per delete call, so finalize heartbeats and checkpoints in time whatever the table.
SLICE = 8_000
# A retried attempt's first slice: one S3 DeleteObjects.
FIRST_RETRIED_SLICE = 1_000
# Planning never reads statistics files, and an expiry that cleaned up removed those of its
# snapshots that older metadata files still name: the store is asked before their delete.
_UNREAD = frozenset({Category.STATISTICS_FILES})


class PurgeReportObject(StrictModel):
    """The report object in the state location: what the workflow result can't carry."""

    purge_id: str
    metadata_location: str
    dry_run: bool
    counts: FileCounts
    failures: list[FileFailure] = Field(default_factory=list)
    would_delete: list[str] = Field(default_factory=list)
    skipped_foreign: list[str] = Field(default_factory=list)
    unreadable: list[UnreadableFile] = Field(default_factory=list)
    guards: list[GuardOutcome] = Field(
        default_factory=list, description="What the guards found, or why they were not applied."
    )
    finalize: FinalizeResult | None = Field(
        None, description="Finalize's own result, returned again if finalize is retried after it."
    )
    express: ExpressSteps | None = Field(
        None, description="The express lane's steps before finalize, returned again on a retry."
    )


class FinalizeProgress(StrictModel):
    """Groups [0, next_group) are settled, and paths [0, next_path) of the next one."""

    next_group: int = 0
    next_path: int = 0
    counts: FileCounts = Field(default_factory=FileCounts)
    failures: list[FileFailure] = Field(default_factory=list)
    would_delete: list[str] = Field(default_factory=list)
    delete_requests: int = 0
    throttled_requests: int = 0


def report_uri(plan_uri: str) -> str:
    return f"{parent_dir(plan_uri)}/report.json"


def progress_uri(plan_uri: str) -> str:
    return f"{parent_dir(plan_uri)}/finalize.json"


@dataclass(frozen=True)
class FinalizeWork:
    """One plan's finalize: its files deleted through `store`, its progress kept in `state`."""

    plan: Plan
    plan_uri: str
    chunk_count: int
    store: ObjectStore
    state: StateStore
    dry_run: bool
    keep_metadata_chain: bool
    counts_so_far: FileCounts
    beat: Callable[[], None]
    guards: list[GuardOutcome] = field(default_factory=list)
    express: ExpressSteps | None = None


def finalize(work: FinalizeWork) -> FinalizeResult:
    plan, plan_uri, state, beat = work.plan, work.plan_uri, work.state, work.beat
    done = finalized_before(state, plan_uri)
    if done is None:
        progress = _delete_groups(work)
        report = PurgeReportObject(
            purge_id=plan.purge_id,
            metadata_location=plan.metadata_location,
            dry_run=work.dry_run,
            counts=work.counts_so_far.model_copy(deep=True),
            skipped_foreign=[file.path for file in plan.foreign_files],
            unreadable=plan.unreadable,
            guards=work.guards,
            express=work.express,
        )
        done = _write_report(report, work, progress)
    # Removal is idempotent: a retry after a crash here finds the report and finishes it.
    chunk_uris = [chunk_outcome_uri(plan_uri, index) for index in range(work.chunk_count)]
    content_uris = [content_chunk_uri(plan_uri, index) for index in range(len(plan.content_chunks))]
    planning_uris = [
        context_uri(plan_uri),
        emitted_uri(plan_uri),
        reach_partial_uri(plan_uri),
        *spill_part_uris(plan_uri, plan.spill),
        *(pending_part_uri(plan_uri, part) for part in range(plan.pending_parts)),
    ]
    for uri in [*chunk_uris, *content_uris, *planning_uris, progress_uri(plan_uri), plan_uri]:
        state.delete(uri)
        beat()
    return done


def _delete_groups(work: FinalizeWork) -> FinalizeProgress:
    plan, plan_uri, state, beat = work.plan, work.plan_uri, work.state, work.beat
    saved = state.read(progress_uri(plan_uri))
    progress = FinalizeProgress.model_validate_json(saved) if saved else FinalizeProgress()
    groups = plan.finalize_groups()
    gone = plan.known_missing()
    sizes = group_sizes(SLICE, FIRST_RETRIED_SLICE, retried())
    while progress.next_group < len(groups):
        category, listed = groups[progress.next_group]
        paths = [path for path in listed if path not in gone]
        bucket = progress.counts.of(category)
        if progress.next_path == 0:
            bucket.already_missing += len(listed) - len(paths)
        reason = (
            SkipReason.DRY_RUN
            if work.dry_run
            else SkipReason.KEPT_FOR_RETRY
            if work.keep_metadata_chain and category in KEPT_FOR_RETRY
            else None
        )
        if reason is not None:
            bucket.skipped[reason] = bucket.skipped.get(reason, 0) + len(paths)
            if work.dry_run:
                progress.would_delete.extend(paths)
            progress.next_path = len(paths)
        while progress.next_path < len(paths):
            start, end = progress.next_path, min(progress.next_path + next(sizes), len(paths))
            result = work.store.delete(paths[start:end], alive=beat, asking=category in _UNREAD)
            progress.delete_requests += result.requests
            progress.throttled_requests += result.throttled
            bucket.deleted += len(result.deleted)
            bucket.bytes_deleted += sum(plan.sizes.get(path, 0) for path in result.deleted)
            bucket.already_missing += len(result.missing)
            bucket.failed += len(result.failed)
            progress.failures.extend(
                FileFailure(path=path, category=category, error=error) for path, error in result.failed
            )
            progress.next_path = end
            if progress.next_path < len(paths):
                _save(state, plan_uri, progress, beat)
        progress.next_group += 1
        progress.next_path = 0
        # One save moves the checkpoint past the group (an empty group changed nothing to save).
        if listed:
            _save(state, plan_uri, progress, beat)
    return progress


def _save(state: StateStore, plan_uri: str, progress: FinalizeProgress, beat: Callable[[], None]) -> None:
    state.write(progress_uri(plan_uri), progress)
    beat()


def _write_report(
    report: PurgeReportObject, work: FinalizeWork, progress: FinalizeProgress
) -> FinalizeResult:
    """Adds finalize's counts and every chunk's lists to `report` and writes it."""
    plan_uri, state = work.plan_uri, work.state
    report.counts.add(progress.counts)
    for index in range(work.chunk_count):
        saved = state.read(chunk_outcome_uri(plan_uri, index))
        if saved:
            chunk = ChunkOutcome.model_validate_json(saved)
            report.failures.extend(chunk.failures)
            report.would_delete.extend(chunk.would_delete)
        work.beat()
    report.failures.extend(progress.failures)
    report.would_delete.extend(progress.would_delete)
    location = report_uri(plan_uri)
    report.finalize = FinalizeResult(
        counts=progress.counts,
        failures_total=len(progress.failures),
        failure_sample=progress.failures[:FAILURE_SAMPLE_SIZE],
        report_location=location,
        delete_requests=progress.delete_requests,
        throttled_requests=progress.throttled_requests,
    )
    state.write(location, report)
    return report.finalize


def finalized_before(state: StateStore, plan_uri: str) -> FinalizeResult | None:
    """The result of a finalize that completed but whose activity result was lost."""
    report = written_report(state, plan_uri)
    return report.finalize if report else None


def written_report(state: StateStore, plan_uri: str) -> PurgeReportObject | None:
    saved = state.read(report_uri(plan_uri))
    return PurgeReportObject.model_validate_json(saved) if saved else None
