"""One part of a table's location swept page by page: each page is written to the state location
before anything of it is deleted, and the checkpoint says which page comes next, so a retried
attempt redoes the page it was on from that record (its keys, its next listing token): nothing is
deleted unlisted and nothing is counted twice."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta

from icepurge.activities.delete.object_store import ObjectStore
from icepurge.contract.strict_model import StrictModel
from icepurge.contract.sweep_steps import SweepCheckpoint, SweepInput
from icepurge.state.state_store import StateStore
from icepurge.stores.addresses import normalize
from icepurge.stores.registry import open_store
from icepurge.stores.store import Store, StoreContext

_PAGE_KEYS = 1000
# Listings give whole seconds: an object stamped 12:00:00 may be from 12:00:00.9, after a cutoff
# of 12:00:00.5. Counting it a second younger keeps it.
_CLOCK_RESOLUTION = timedelta(seconds=1)


class SweepPage(StrictModel):
    """One listed page: the objects to sweep, what the listing said comes next."""

    objects: list[str]
    kept_recent: int
    next_token: str | None


@dataclass(frozen=True)
class SweepTarget:
    """A part of a location to list: everything under it, or (flat) only its own level."""

    location: str
    flat: bool = False


def split_location(step: SweepInput, location: str) -> list[SweepTarget]:
    """The location's first level: its own objects, and one target per folder under it."""
    store = open_store(location, StoreContext(step.request.file_io_properties, connections=4))
    folders: list[str] = []
    token: str | None = None
    while True:
        page = store.list_page(location, token, _PAGE_KEYS, flat=True)
        folders += page.folders
        token = page.next_token
        if token is None:
            break
    return [SweepTarget(location, flat=True), *(SweepTarget(folder) for folder in folders)]


@dataclass(frozen=True)
class TargetSweep:
    """Sweeps one target, page by page; `save` keeps its checkpoint (a heartbeat, or an object
    when no activity is around to heartbeat)."""

    step: SweepInput
    state: StateStore
    planned: frozenset[str]
    record: str
    save: Callable[[SweepCheckpoint], None]

    def run(self, target: SweepTarget, done: SweepCheckpoint, store: ObjectStore, key: str) -> None:
        dry_run = self.step.request.options.dry_run
        while True:
            page_uri = f"{self.record}-{done.pages:06d}.json"
            recorded = self.state.read(page_uri)
            page = (
                SweepPage.model_validate_json(recorded)
                if recorded
                else self._list(target, done, store.store_of(target.location))
            )
            if recorded is None:
                self.state.write(page_uri, page)
            swept = len(page.objects)
            if not dry_run and page.objects:
                # The checkpoint before this page, again while its deletes are in flight.
                outcome = store.delete(page.objects, alive=lambda: self.save(done))
                done.failed += len(outcome.failed)
                swept -= len(outcome.failed)
            done.swept += swept
            done.kept_recent += page.kept_recent
            done.by_prefix[key] = done.by_prefix.get(key, 0) + swept
            done.pages += 1
            done.continuation_token = page.next_token
            self.save(done)
            if page.next_token is None:
                return

    def _list(self, target: SweepTarget, done: SweepCheckpoint, store: Store) -> SweepPage:
        listed = store.list_page(target.location, done.continuation_token, _PAGE_KEYS, flat=target.flat)
        objects, recent = [], 0
        for item in listed.objects:
            # Directory markers (SeaweedFS lists them) hold nothing.
            if item.uri.endswith("/") or normalize(item.uri) in self.planned:
                continue
            if item.modified + _CLOCK_RESOLUTION <= self.step.cutoff:
                objects.append(item.uri)
            else:
                recent += 1
        return SweepPage(objects=objects, kept_recent=recent, next_token=listed.next_token)
