"""The local engine: a chunk's deletes run on threads inside the worker process."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from icepurge.activities.chunk_deleter import ChunkJob, ChunkOutcome
from icepurge.activities.locations import LocationGuard
from icepurge.activities.object_store import ObjectStore
from icepurge.activities.plan_model import ContentFile
from icepurge.activities.state_store import StateStore
from icepurge.contract.request import PurgeRequest
from icepurge.contract.steps import ChunkCheckpoint
from icepurge.stores.outcomes import DeleteTuning, LatencyObserver, RequestStats


def run_files(
    *,
    files: list[ContentFile],
    gc_enabled: bool,
    locations: list[str],
    request: PurgeRequest,
    state: StateStore,
    outcome_uri: str,
    tuning: DeleteTuning,
    heartbeat: Callable[[ChunkCheckpoint], None],
    checkpoint: ChunkCheckpoint,
    requests_per_second: float | None,
    observer: LatencyObserver = None,
) -> tuple[ChunkOutcome, RequestStats]:
    """Deletes distinct content files with the same storage code on either engine;
    `requests_per_second` is this caller's share of the purge's per-bucket budget."""
    options = request.options
    checked = replace(tuning, check_existence=options.check_existence)
    with ObjectStore(
        request.file_io_properties, options.concurrency, checked, requests_per_second, observer
    ) as store:
        job = ChunkJob(
            files=files,
            gc_enabled=gc_enabled,
            outcome_uri=outcome_uri,
            store=store,
            state=state,
            guard=LocationGuard(locations, options.location_guard),
            dry_run=options.dry_run,
            heartbeat=heartbeat,
            concurrency=options.concurrency,
            batch_files=tuning.batch_files,
        )
        return job.run(checkpoint)
