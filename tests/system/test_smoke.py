from collections import Counter

from pyiceberg.catalog.sql import SqlCatalog

from icepurge.api.clients.temporal_client import PurgeClient
from icepurge.contract.counts import Category
from icepurge.contract.states import PurgeState
from tests.purge_helpers import purge, request_for
from tests.store import S3Store
from tests.tables import simple_table


async def test_simple_purge_deletes_everything(catalog: SqlCatalog, purges: PurgeClient, s3: S3Store) -> None:
    table = simple_table(catalog, ("smoke",), "t1")
    before = s3.list(table.location())
    assert before
    report = await purge(purges, request_for(table, s3.properties))
    assert report.status.state is PurgeState.SUCCEEDED
    assert s3.list(table.location()) == set()


def category_of(uri: str) -> Category:
    """What the purge counts a file of a plain PyIceberg table as, from its name."""
    name = uri.rsplit("/", 1)[-1]
    if "/data/" in uri:
        return Category.DATA_FILES
    if name.startswith("snap-"):
        return Category.MANIFEST_LISTS
    if name.endswith(".metadata.json"):
        return Category.METADATA_FILES
    return Category.MANIFESTS


async def test_bytes_deleted_are_the_objects_sizes_in_every_category(
    catalog: SqlCatalog, purges: PurgeClient, s3: S3Store
) -> None:
    table = simple_table(catalog, ("smoke",), "sized", appends=3)
    expected: Counter[Category] = Counter()
    for uri, size in s3.sizes(table.location()).items():
        expected[category_of(uri)] += size
    assert set(expected) == {
        Category.DATA_FILES,
        Category.MANIFESTS,
        Category.MANIFEST_LISTS,
        Category.METADATA_FILES,
    }
    report = await purge(purges, request_for(table, s3.properties))
    by_category = report.status.counts.by_category
    assert {category: by_category[category].bytes_deleted for category in expected} == dict(expected)
    assert report.status.counts.total().bytes_deleted == sum(expected.values())
