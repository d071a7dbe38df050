"""The location sweep: list a table's location a page at a time and delete the objects older than
the cutoff through the same bulk path and rate budget as the planned deletes.

Each page is written to the state location before anything of it is deleted, and the heartbeat
says which page comes next: a retried attempt redoes the page it was on from that record (its
keys, its next listing token), so nothing is deleted unlisted and nothing is counted twice."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import timedelta
from typing import Any
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict
from temporalio import activity
from temporalio.exceptions import ApplicationError

from activities.attempt_reports import reporting_failed_attempts
from activities.bulk_delete import ObjectStore
from activities.finalizer import PurgeReportObject
from activities.locations import normalize
from activities.progress_signals import ProgressSignals
from activities.s3_client import s3_client
from activities.settings import ActivitySettings
from activities.state_store import StateStore
from workflows.constants import SWEEP_ACTIVITY
from workflows.sweep_steps import SweepCheckpoint, SweepInput, SweepResult

_PAGE_KEYS = 1000
# Listings give whole seconds: an object stamped 12:00:00 may be from 12:00:00.9, after a cutoff
# of 12:00:00.5. Counting it a second younger keeps it.
_CLOCK_RESOLUTION = timedelta(seconds=1)


class SweepPage(BaseModel):
    """One listed page: the objects to sweep, what the listing said comes next."""

    model_config = ConfigDict(extra="forbid")

    objects: list[str]
    kept_recent: int
    next_token: str | None


def _bucket_and_prefix(location: str) -> tuple[str, str]:
    parts = urlsplit(location)
    return parts.netloc, parts.path.strip("/") + "/"


class SweepActivities:
    def __init__(self, settings: ActivitySettings, signals: ProgressSignals | None = None) -> None:
        self._settings = settings
        self._signals = signals
        self._state = StateStore(settings.state_location, settings.state_properties)

    @property
    def all(self) -> list[Callable[..., Any]]:
        return [self.sweep_location]

    @activity.defn(name=SWEEP_ACTIVITY)
    def sweep_location(self, step: SweepInput) -> SweepResult:
        with reporting_failed_attempts(self._signals, SWEEP_ACTIVITY):
            details = activity.info().heartbeat_details
            done = SweepCheckpoint.model_validate(details[0]) if details else SweepCheckpoint()
            options = step.request.options
            tuning = replace(self._settings.tuning, check_existence=False)
            properties = step.request.file_io_properties
            planned = self._planned(step.dry_run_report)
            with ObjectStore(
                properties, options.concurrency, tuning, options.bucket_requests_per_second
            ) as store:
                sweep = _Sweep(step, self._state, store, planned)
                for index in range(done.prefix_index, len(step.prefixes)):
                    sweep.prefix(index, done)
                    done.prefix_index, done.continuation_token, done.pages = index + 1, None, 0
                    activity.heartbeat(done.model_dump(mode="json"))
            return SweepResult(
                swept=done.swept,
                kept_recent=done.kept_recent,
                failed=done.failed,
                by_prefix=done.by_prefix,
                listing_location=self._state.uri(step.purge_id, "sweep"),
            )

    def _planned(self, dry_run_report: str | None) -> frozenset[str]:
        """A dry run deleted nothing: the plan's own files are still there and are not the sweep's."""
        if dry_run_report is None:
            return frozenset()
        raw = self._state.read(dry_run_report)
        if raw is None:
            raise ApplicationError(f"the dry run's report {dry_run_report} is gone", non_retryable=True)
        return frozenset(normalize(path) for path in PurgeReportObject.model_validate_json(raw).would_delete)


@dataclass(frozen=True)
class _Sweep:
    step: SweepInput
    state: StateStore
    store: ObjectStore
    planned: frozenset[str]

    def prefix(self, index: int, done: SweepCheckpoint) -> None:
        location = normalize(self.step.prefixes[index])
        dry_run = self.step.request.options.dry_run
        while True:
            page_uri = self.state.uri(self.step.purge_id, "sweep", f"{index:04d}-{done.pages:06d}.json")
            recorded = self.state.read(page_uri)
            page = SweepPage.model_validate_json(recorded) if recorded else self._list(location, done)
            if recorded is None:
                self.state.write(page_uri, page)
            swept = len(page.objects)
            if not dry_run and page.objects:
                outcome = self.store.delete(page.objects)
                done.failed += len(outcome.failed)
                swept -= len(outcome.failed)
            done.swept += swept
            done.kept_recent += page.kept_recent
            done.by_prefix[location] = done.by_prefix.get(location, 0) + swept
            done.pages += 1
            done.continuation_token = page.next_token
            activity.heartbeat(done.model_dump(mode="json"))
            if page.next_token is None:
                return

    def _list(self, location: str, done: SweepCheckpoint) -> SweepPage:
        bucket, prefix = _bucket_and_prefix(location)
        client = s3_client(self.step.request.file_io_properties, max_connections=4)
        arguments: dict[str, Any] = {"Bucket": bucket, "Prefix": prefix, "MaxKeys": _PAGE_KEYS}
        if done.continuation_token:
            arguments["ContinuationToken"] = done.continuation_token
        answer = client.list_objects_v2(**arguments)
        objects, recent = [], 0
        for item in answer.get("Contents", []):
            uri = f"s3://{bucket}/{item['Key']}"
            # Directory markers (SeaweedFS lists them) hold nothing.
            if uri.endswith("/") or uri in self.planned:
                continue
            if item["LastModified"] + _CLOCK_RESOLUTION <= self.step.cutoff:
                objects.append(uri)
            else:
                recent += 1
        following = answer.get("NextContinuationToken") if answer.get("IsTruncated") else None
        return SweepPage(objects=objects, kept_recent=recent, next_token=following)
