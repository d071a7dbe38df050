"""The location sweep, as workflow steps: decide whether it may run, guard it at catalog scope,
then list and delete (an activity that checkpoints its listing). Deterministic: no I/O here."""

from __future__ import annotations

from datetime import timedelta

from temporalio import workflow

from icepurge.contract.activity_steps import SWEEP
from icepurge.contract.request import Engine, OverlapScope, PurgeRequest
from icepurge.contract.schemes import LISTABLE_KINDS, StoreKind, scheme_of, store_kind
from icepurge.contract.status import PurgeStatus
from icepurge.contract.sweep_steps import SweepInput, SweepOutcome, SweepResult
from icepurge.workflows.shared.steps_runner import run_step
from icepurge.workflows.shared.upgrades import PREVIEW_GUARDS, SWEEP_ANY_LISTABLE_STORE
from icepurge.workflows.table.table_lifecycle import live_table_outcome


def _inside(location: str, base: str) -> bool:
    return location.rstrip("/") == base.rstrip("/") or location.startswith(base.rstrip("/") + "/")


def _refusal(status: PurgeStatus, location: str) -> str | None:
    """Why the sweep must not run, before anything is asked of the catalog."""
    if status.gc_enabled is False:
        return "not applied: gc.enabled=false, the table's files are not icepurge's to delete"
    if status.failures_total:
        return f"not applied: {status.failures_total} planned files failed; re-run the purge, then sweep"
    if not _listable(location):
        return f"not applied: {scheme_of(location)}:// locations can't be listed, so they can't be swept"
    return None


def _listable(location: str) -> bool:
    """S3 was the only store a sweep could list before the store layer; a purge started then
    keeps that rule."""
    kind = store_kind(location)
    if kind is StoreKind.S3:
        return True
    return kind in LISTABLE_KINDS and workflow.patched(SWEEP_ANY_LISTABLE_STORE)


async def _guard_refusal(status: PurgeStatus, request: PurgeRequest, location: str) -> str | None:
    """Why the guard at catalog scope stops the sweep; a dry run's is what the real sweep meets."""
    guarded = request.model_copy(
        update={
            "options": request.options.model_copy(
                update={"live_table_guard": True, "overlap_scope": OverlapScope.CATALOG}
            )
        }
    )
    preview_of_drop = request.options.dry_run and status.by_name
    guard = await live_table_outcome(guarded, status.purge_id, [location], preview_of_drop=preview_of_drop)
    would = "the real sweep would be " if request.options.dry_run else ""
    if not guard.applied:
        return f"{would}refused: no catalog to check for live tables ({guard.detail})"
    if not guard.passed:
        return f"{would}refused, nothing {'would be ' if would else ''}swept: {guard.detail}"
    return None


async def sweep_location(request: PurgeRequest, status: PurgeStatus, locations: list[str]) -> SweepOutcome:
    """Lists the table's location (the write paths inside it included) and deletes what is older
    than the purge's start minus the grace period, once the live-table guard at catalog scope
    found no live table overlapping it."""
    location = locations[0]
    refusal = _refusal(status, location)
    if refusal is not None:
        return SweepOutcome(applied=False, detail=refusal)
    if request.options.dry_run and not workflow.patched(PREVIEW_GUARDS):
        note = "; the live-table guard (catalog scope) runs before a real sweep"
    else:
        refused = await _guard_refusal(status, request, location)
        if refused is not None:
            return SweepOutcome(applied=False, detail=refused)
        note = "; no live table of the catalog overlaps the location"
    started = status.started_at or workflow.now()
    cutoff = started - timedelta(seconds=request.options.sweep_grace_seconds)
    result: SweepResult = await run_step(
        SWEEP,
        SweepInput(
            purge_id=status.purge_id,
            request=request,
            prefixes=[location],
            cutoff=cutoff,
            engine=Engine(status.engine),
            dry_run_report=status.report_location if request.options.dry_run else None,
            run_chain=workflow.info().first_execution_run_id,
        ),
    )
    outside = [other for other in locations[1:] if not _inside(other, location)]
    verb = "would sweep" if request.options.dry_run else "swept"
    detail = f"{verb} {result.swept} objects older than {cutoff:%Y-%m-%d %H:%M:%S} UTC"
    detail += f"; kept {result.kept_recent} newer"
    if result.listings > 1:
        detail += f", listed in {result.listings} parallel Spark tasks"
    detail += note
    if outside:
        detail += f"; not swept, outside the table location: {', '.join(outside)}"
    return SweepOutcome(
        applied=True,
        detail=detail,
        swept=result.swept,
        kept_recent=result.kept_recent,
        failed=result.failed,
        by_prefix=result.by_prefix,
        listing_location=result.listing_location,
        listings=result.listings,
        cutoff=cutoff,
    )
