"""The location sweep's activity: list a table's location a page at a time and delete the objects
older than the cutoff through the same bulk path and rate budget as the planned deletes
(target_sweep.py), on the worker (local_sweep.py) or on Spark (spark_sweep.py)."""

from __future__ import annotations

from typing import Protocol

from temporalio.exceptions import ApplicationError

from icepurge.activities.delete.spark_engine import SparkEngine
from icepurge.activities.finalize.finalizer import PurgeReportObject
from icepurge.activities.settings import ActivitySettings
from icepurge.activities.signals.attempt_reports import reporting_failed_attempts
from icepurge.activities.signals.progress_signals import ProgressSignals
from icepurge.activities.step_definition import implements
from icepurge.activities.sweep.local_sweep import LocalSweep
from icepurge.activities.sweep.spark_sweep import SparkSweep
from icepurge.contract.activity_steps import SWEEP
from icepurge.contract.names import SWEEP_ACTIVITY
from icepurge.contract.request import Engine
from icepurge.contract.sweep_steps import SweepCheckpoint, SweepInput, SweepResult
from icepurge.state.state_store import StateStore
from icepurge.stores.addresses import normalize


class SweepEngine(Protocol):
    def sweep(self, step: SweepInput, planned: frozenset[str]) -> tuple[SweepCheckpoint, int]: ...


class SweepActivities:
    def __init__(
        self,
        settings: ActivitySettings,
        spark: SparkEngine | None = None,
        signals: ProgressSignals | None = None,
    ) -> None:
        self._signals = signals
        self._state = StateStore(settings.state_location, settings.state_properties)
        # A sweep asked of Spark on a worker without it lists on the worker: it reads no plan
        # an engine chose for it.
        local = LocalSweep(settings, self._state)
        self._engines: dict[Engine, SweepEngine] = {
            Engine.LOCAL: local,
            Engine.AUTO: local,
            Engine.SPARK: local,
        }
        if spark is not None:
            self._engines[Engine.SPARK] = SparkSweep(settings, self._state, spark)

    @implements(SWEEP)
    def sweep_location(self, step: SweepInput) -> SweepResult:
        with reporting_failed_attempts(self._signals, SWEEP_ACTIVITY):
            done, listings = self._engines[step.engine].sweep(step, self._planned(step.dry_run_report))
            return SweepResult(
                swept=done.swept,
                kept_recent=done.kept_recent,
                failed=done.failed,
                by_prefix=done.by_prefix,
                listing_location=self._state.uri(*step.state_parts("sweep")),
                listings=listings,
            )

    def _planned(self, dry_run_report: str | None) -> frozenset[str]:
        """A dry run deleted nothing: the plan's own files are still there and are not the sweep's."""
        if dry_run_report is None:
            return frozenset()
        raw = self._state.read(dry_run_report)
        if raw is None:
            raise ApplicationError(f"the dry run's report {dry_run_report} is gone", non_retryable=True)
        return frozenset(normalize(path) for path in PurgeReportObject.model_validate_json(raw).would_delete)
