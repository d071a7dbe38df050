"""The location sweep on the worker: each of the purge's locations swept in turn, the checkpoint
in the activity's heartbeat."""

from __future__ import annotations

from dataclasses import replace

from temporalio import activity

from icepurge.activities.delete.object_store import ObjectStore
from icepurge.activities.settings import ActivitySettings
from icepurge.activities.sweep.target_sweep import SweepTarget, TargetSweep
from icepurge.contract.sweep_steps import SweepCheckpoint, SweepInput
from icepurge.state.state_store import StateStore
from icepurge.stores.addresses import normalize


class LocalSweep:
    def __init__(self, settings: ActivitySettings, state: StateStore) -> None:
        self._settings = settings
        self._state = state

    def sweep(self, step: SweepInput, planned: frozenset[str]) -> tuple[SweepCheckpoint, int]:
        """The counts, and how many listings it took (one per location)."""
        details = activity.info().heartbeat_details
        done = SweepCheckpoint.model_validate(details[0]) if details else SweepCheckpoint()
        options = step.request.options

        def beat(now: SweepCheckpoint) -> None:
            activity.heartbeat(now.model_dump(mode="json"))

        with ObjectStore(
            step.request.file_io_properties,
            options.concurrency,
            replace(self._settings.tuning, check_existence=False),
            options.bucket_requests_per_second,
        ) as store:
            for index in range(done.prefix_index, len(step.prefixes)):
                location = normalize(step.prefixes[index])
                record = self._state.uri(*step.state_parts("sweep", f"{index:04d}"))
                TargetSweep(step, self._state, planned, record, beat).run(
                    SweepTarget(location), done, store, location
                )
                done.prefix_index, done.continuation_token, done.pages = index + 1, None, 0
                beat(done)
        return done, len(step.prefixes)
