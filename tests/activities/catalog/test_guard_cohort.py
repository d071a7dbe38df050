"""A small-table batch's guards share one listing of their scope: taken once every table of the
batch has asked for it or is past asking, so it began after each of them asked and still shows
every table created meanwhile, even one created after the first of them asked."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from pyiceberg.catalog.sql import SqlCatalog

from icepurge.catalogs.guard_cohort import GuardCohort, GuardParty
from icepurge.catalogs.live_tables import FootprintCache, GuardScan, LiveTableScanner, PurgedTable
from icepurge.contract.request import OverlapScope
from icepurge.devstack.guarded_tables import dropped_for_guard
from tests.tables import SCHEMA

NAMESPACE = ("batch",)
TABLES = 6
WAIT = 10


def _catalog(tmp_path: Path, tables: int) -> SqlCatalog:
    tmp_path.mkdir(parents=True, exist_ok=True)
    catalog = SqlCatalog("lake", uri=f"sqlite:///{tmp_path / 'c.sqlite'}", warehouse=tmp_path.as_uri())
    catalog.create_namespace(NAMESPACE)
    for index in range(tables):
        catalog.create_table((*NAMESPACE, f"t{index}"), schema=SCHEMA)
    return catalog


def _dropped(catalog: SqlCatalog, name: str, party: GuardParty | None) -> PurgedTable:
    return dropped_for_guard(catalog, (*NAMESPACE, name), party)


def _warm(scanner: LiveTableScanner, catalog: SqlCatalog) -> None:
    """A first guard reads every table once: the guards measured after it read none."""
    catalog.create_table((*NAMESPACE, "warm"), schema=SCHEMA)
    assert (
        scanner.scan(catalog, _dropped(catalog, "warm", None), OverlapScope.NAMESPACE, lambda: None).refusal
        is None
    )


def _guards_arriving_apart(catalog: SqlCatalog, parties: list[GuardParty] | None) -> list[GuardScan]:
    """The batch's tables dropped and guarded one after another, 50 ms apart, each on its thread."""
    scanner = LiveTableScanner(FootprintCache(ttl_seconds=0), concurrency=2)
    _warm(scanner, catalog)

    def guard(index: int) -> GuardScan:
        time.sleep(0.05 * index)
        purged = _dropped(catalog, f"t{index}", parties[index] if parties else None)
        return scanner.scan(catalog, purged, OverlapScope.NAMESPACE, lambda: None)

    with ThreadPoolExecutor(TABLES) as pool:
        return list(pool.map(guard, range(TABLES)))


def test_a_batchs_guards_arriving_apart_take_one_listing(tmp_path: Path) -> None:
    together = _guards_arriving_apart(_catalog(tmp_path / "together", TABLES), GuardCohort(TABLES).parties())
    apart = _guards_arriving_apart(_catalog(tmp_path / "apart", TABLES), None)

    assert all(scan.refusal is None for scan in together + apart)
    # A guard's calls: the load of its own table, and the listing if it made it.
    assert sum(scan.catalog_calls for scan in together) == TABLES + 1
    # Apart, the first guard lists alone; at best all the others share the next listing.
    assert sum(scan.catalog_calls for scan in apart) >= TABLES + 2


@dataclass
class TwoTables:
    """A batch of two tables, t0 dropped; its guard, once asked, waits for t1's."""

    catalog: SqlCatalog
    scanner: LiveTableScanner
    first: GuardParty
    second: GuardParty
    purged: PurgedTable

    @classmethod
    def make(cls, tmp_path: Path) -> TwoTables:
        catalog = _catalog(tmp_path, 2)
        scanner = LiveTableScanner(FootprintCache(ttl_seconds=0), concurrency=2)
        _warm(scanner, catalog)
        first, second = GuardCohort(2).parties()
        return cls(catalog, scanner, first, second, _dropped(catalog, "t0", first))

    def first_guard(
        self, pool: ThreadPoolExecutor, beat: Callable[[], None] = lambda: None
    ) -> Future[GuardScan]:
        asked = pool.submit(self.scanner.scan, self.catalog, self.purged, OverlapScope.NAMESPACE, beat)
        deadline = time.monotonic() + WAIT
        while self.first.index not in self.first.cohort._done_asking:
            assert time.monotonic() < deadline, "the guard never asked"
            time.sleep(0.005)
        return asked


def test_the_shared_listing_shows_a_table_created_after_the_first_guard_asked(tmp_path: Path) -> None:
    batch = TwoTables.make(tmp_path)
    catalog, scanner, purged, second = batch.catalog, batch.scanner, batch.purged, batch.second

    with ThreadPoolExecutor(1) as pool:
        asked = batch.first_guard(pool)
        # Created inside the purged table's location once its guard asked: the listing the
        # guards share begins after the last of them asks, so it must show this table.
        catalog.create_table((*NAMESPACE, "inside"), schema=SCHEMA, location=purged.locations[0] + "/inside")
        assert not asked.done()
        other = scanner.scan(catalog, _dropped(catalog, "t1", second), OverlapScope.NAMESPACE, lambda: None)
        refusal = asked.result(WAIT).refusal

    assert refusal is not None and "batch.inside" in refusal
    assert other.refusal is None


def test_a_table_ended_before_its_guard_lets_the_others_go_and_a_retried_guard_lists_again(
    tmp_path: Path,
) -> None:
    batch = TwoTables.make(tmp_path)

    with ThreadPoolExecutor(1) as pool:
        first = batch.first_guard(pool)
        assert not first.done()
        batch.second.past_asking()
        assert first.result(WAIT).catalog_calls == 2

    retried = batch.scanner.scan(batch.catalog, batch.purged, OverlapScope.NAMESPACE, lambda: None)
    assert retried.refusal is None and retried.catalog_calls == 2


def test_a_guard_waiting_for_its_batch_keeps_heartbeating(tmp_path: Path) -> None:
    batch = TwoTables.make(tmp_path)
    beats = threading.Semaphore(0)

    with ThreadPoolExecutor(1) as pool:
        first = batch.first_guard(pool, beats.release)
        # One listing beats once; a guard waiting for its batch beats every second.
        for _ in range(2):
            assert beats.acquire(timeout=WAIT), "no heartbeat while waiting for the batch"
        assert not first.done()
        batch.second.past_asking()
        assert first.result(WAIT).refusal is None
