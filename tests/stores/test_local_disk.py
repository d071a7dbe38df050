"""Tables on the local disk: deleted in slices of plain unlinks, with the same parity, safety
and outcomes as through the FileIO."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from pyiceberg.catalog.sql import SqlCatalog

from icepurge.api.clients.temporal_client import PurgeClient
from icepurge.contract.states import PurgeState
from icepurge.stores.local_deletes import LocalBulkDeleter, local_path
from icepurge.stores.outcomes import DeleteTuning
from icepurge.stores.rate_budget import BucketRateLimits
from icepurge.stores.store import Deletes
from tests.expected import drop_table_data_set, history_set
from tests.purge_helpers import purge, request_for
from tests.tables import rich_table


def _files(directory: Path) -> set[str]:
    return {str(path) for path in directory.rglob("*") if path.is_file()}


async def test_a_rich_table_on_disk_is_purged_exactly_and_its_neighbour_kept(
    purges: PurgeClient, tmp_path: Path
) -> None:
    warehouse = tmp_path / "warehouse"
    warehouse.mkdir()
    catalog = SqlCatalog("disk", uri=f"sqlite:///{tmp_path / 'c.sqlite'}", warehouse=warehouse.as_uri())
    table = rich_table(catalog, ("disk",), "rich")
    table_dir = Path(table.location().removeprefix("file://"))
    neighbour = table_dir.parent / "rich_kept" / "data" / "x.parquet"
    neighbour.parent.mkdir(parents=True)
    neighbour.write_bytes(b"not the table's")
    orphan = table_dir / "data" / "never-referenced.parquet"
    orphan.write_bytes(b"no metadata knows me")
    expected = drop_table_data_set(table.io, table.metadata_location) | history_set(
        table.io, table.metadata_location
    )
    before = _files(table_dir)

    report = await purge(purges, request_for(table, {}))

    assert report.status.state is PurgeState.SUCCEEDED
    assert before - _files(table_dir) == {local_path(uri) for uri in expected}
    assert _files(table_dir) == {str(orphan)}
    assert neighbour.read_bytes() == b"not the table's"
    total = report.status.counts.total()
    assert total.deleted == len(expected) and total.failed == 0


def test_local_deletes_count_missing_and_failed_files_apart(tmp_path: Path) -> None:
    present = [tmp_path / f"f{index}.parquet" for index in range(50)]
    bare = tmp_path / "given-as-a-bare-path.parquet"
    for path in [*present, bare]:
        path.write_bytes(b"x")
    folder = tmp_path / "a-folder.parquet"
    folder.mkdir()
    gone = (tmp_path / "gone.parquet").as_uri()
    uris = [*(path.as_uri() for path in present), str(bare), gone, folder.as_uri()]
    with ThreadPoolExecutor(4) as pool:
        outcome = LocalBulkDeleter(
            Deletes(pool, BucketRateLimits(None), DeleteTuning(), concurrency=4)
        ).delete(uris)
    assert sorted(outcome.deleted) == sorted([*(path.as_uri() for path in present), str(bare)])
    assert outcome.missing == [gone]
    assert [uri for uri, _ in outcome.failed] == [folder.as_uri()]
    assert outcome.requests == len(uris)
    assert not any(path.exists() for path in [*present, bare])
    assert folder.is_dir()


def test_local_paths_are_where_the_fileio_would_look() -> None:
    for uri, path in (
        ("file:///w/t/part=1/a b.parquet", "/w/t/part=1/a b.parquet"),
        ("file://host/w/t.parquet", "host/w/t.parquet"),
        ("file:///w/t.parquet?v=1", "/w/t.parquet"),
        ("/w/t.parquet", "/w/t.parquet"),
    ):
        assert local_path(uri) == path
