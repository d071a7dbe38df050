"""The local engine: a chunk's deletes run on threads inside the worker process. `delete_files`
is both engines' deletion: the Spark engine's tasks run it over their slice of a chunk."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from icepurge.activities.delete.chunk_deleter import ChunkJob, ChunkOutcome
from icepurge.activities.delete.engine import ChunkWork
from icepurge.activities.delete.object_store import ObjectStore
from icepurge.activities.plan.plan_model import ContentFile
from icepurge.catalogs.locations import LocationGuard
from icepurge.contract.request import PurgeRequest
from icepurge.contract.steps import ChunkCheckpoint
from icepurge.state.state_store import StateStore
from icepurge.stores.outcomes import DeleteTuning, LatencyObserver, RequestStats
from icepurge.stores.rate_budget import task_share


@dataclass(frozen=True)
class FileDeletes:
    """Distinct content files to delete, checkpointed to `outcome_uri`; `requests_per_second` is
    this caller's share of the purge's per-bucket budget."""

    files: list[ContentFile]
    gc_enabled: bool
    locations: list[str]
    request: PurgeRequest
    outcome_uri: str
    tuning: DeleteTuning
    requests_per_second: float | None


def delete_files(
    deletes: FileDeletes,
    state: StateStore,
    heartbeat: Callable[[ChunkCheckpoint], None],
    checkpoint: ChunkCheckpoint,
    observer: LatencyObserver = None,
) -> tuple[ChunkOutcome, RequestStats]:
    options = deletes.request.options
    checked = replace(deletes.tuning, check_existence=options.check_existence)
    with ObjectStore(
        deletes.request.file_io_properties,
        options.concurrency,
        checked,
        deletes.requests_per_second,
        observer,
    ) as store:
        job = ChunkJob(
            files=deletes.files,
            gc_enabled=deletes.gc_enabled,
            outcome_uri=deletes.outcome_uri,
            store=store,
            state=state,
            guard=LocationGuard(deletes.locations, options.location_guard),
            dry_run=options.dry_run,
            heartbeat=heartbeat,
            concurrency=options.concurrency,
            batch_files=deletes.tuning.batch_files,
        )
        return job.run(checkpoint)


class LocalEngine:
    def __init__(self, state: StateStore, tuning: DeleteTuning) -> None:
        self._state = state
        self._tuning = tuning

    def run_chunk(self, work: ChunkWork) -> tuple[ChunkOutcome, RequestStats]:
        options = work.request.options

        def beat(checkpoint: ChunkCheckpoint) -> None:
            work.heartbeat(checkpoint)
            work.report(checkpoint.counts)

        deletes = FileDeletes(
            files=work.files,
            gc_enabled=work.context.gc_enabled,
            locations=work.context.locations,
            request=work.request,
            outcome_uri=work.outcome_uri,
            tuning=self._tuning,
            requests_per_second=task_share(options.bucket_requests_per_second, options.chunk_window),
        )
        return delete_files(deletes, self._state, beat, work.checkpoint, work.observer)
