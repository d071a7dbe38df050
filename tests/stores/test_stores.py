"""The store layer: every store answers the same interface the same way (read, write, delete one,
delete many, list a page, head) on the real thing (SeaweedFS, Azurite, the local disk); the
registry picks one implementation per scheme; the location sweep lists any store that can."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from pyiceberg.catalog.sql import SqlCatalog

from icepurge.api.clients.temporal_client import PurgeClient
from icepurge.contract.states import PurgeState
from icepurge.devstack.azurite import AzuriteEndpoint
from icepurge.devstack.stack import WAREHOUSE_BUCKET, EmbeddedStack
from icepurge.devstack.tls_certificates import make_tls_files
from icepurge.stores import s3 as s3_store
from icepurge.stores import s3_deletes
from icepurge.stores.azure import AzureStore
from icepurge.stores.fileio import FileIOStore
from icepurge.stores.gcs import GcsStore
from icepurge.stores.local import LocalStore
from icepurge.stores.outcomes import DeleteTuning
from icepurge.stores.rate_budget import BucketRateLimits
from icepurge.stores.registry import open_store
from icepurge.stores.s3 import S3Store
from icepurge.stores.s3_obstore import takes_obstore
from icepurge.stores.s3_signed_deletes import signed_deletes, takes_signed_deletes
from icepurge.stores.store import Deletes, ListingUnsupportedError, Store, StoreContext
from icepurge.worker.settings import WorkerSettings
from tests.blob_store import BlobStore
from tests.conftest import AZURE_CONTAINER, DISK_CATALOG
from tests.store import S3Store as S3View
from tests.store_parity import assert_sweep_lists_and_deletes, listed_in_pages
from tests.tables import simple_table
from tests.tls_forwarder import tls_forwarder


@dataclass(frozen=True)
class StoreUnderTest:
    context: StoreContext
    base: str
    exists: Callable[[str], bool]


@pytest.fixture
def deletes() -> Iterator[Deletes]:
    limits = BucketRateLimits(None)
    with ThreadPoolExecutor(max_workers=4) as pool:
        # S3 answers "deleted" for an absent key: a HEAD first tells it apart.
        yield Deletes(pool, limits, DeleteTuning(check_existence=True), concurrency=4)
    limits.close()


@pytest.fixture(params=["s3", "s3-boto3", "azure", "local"])
def store_under_test(
    request: pytest.FixtureRequest, deletes: Deletes, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> StoreUnderTest:
    folder = f"stores-{uuid.uuid4().hex[:8]}"
    if request.param.startswith("s3"):
        if request.param == "s3-boto3":
            # What properties without credentials take: boto3 and its credential chain.
            monkeypatch.setattr(s3_store, "takes_obstore", lambda _: False)
            monkeypatch.setattr(s3_store, "takes_signed_deletes", lambda _: False)
        view: S3View = request.getfixturevalue("s3")
        return StoreUnderTest(
            StoreContext(view.properties, deletes=deletes), f"s3://{WAREHOUSE_BUCKET}/{folder}", view.exists
        )
    if request.param == "azure":
        azurite: AzuriteEndpoint = request.getfixturevalue("azurite")
        blobs: BlobStore = request.getfixturevalue("blobs")
        base = azurite.location(AZURE_CONTAINER, folder)
        return StoreUnderTest(StoreContext(blobs.properties, deletes=deletes), base, blobs.exists)
    return StoreUnderTest(
        StoreContext({}, deletes=deletes),
        (tmp_path / folder).as_uri(),
        lambda uri: Path(uri.removeprefix("file://")).exists(),
    )


def test_every_store_answers_the_same_way(store_under_test: StoreUnderTest) -> None:
    base, context = store_under_test.base, store_under_test.context
    store = open_store(base, context)
    names = ["a.json", "b.json", "c.json", "sub/d.json", "sub/deeper/e.json"]
    for name in names:
        store.write(f"{base}/{name}", name.encode())
    assert store.read(f"{base}/sub/d.json") == b"sub/d.json"
    with pytest.raises(FileNotFoundError):
        store.read(f"{base}/absent.json")
    head = store.head(f"{base}/a.json")
    assert head is not None and head.size == len(b"a.json")
    assert abs(head.modified - datetime.now(UTC)) < timedelta(minutes=5)
    assert store.head(f"{base}/absent.json") is None

    listed, pages = listed_in_pages(store, base, limit=2)
    assert listed == sorted(f"{base}/{name}" for name in names)
    assert pages == 3
    flat = store.list_page(base, None, limit=100, flat=True)
    assert [item.uri for item in flat.objects] == [f"{base}/{name}" for name in names[:3]]
    assert flat.folders == [f"{base}/sub"]
    assert flat.next_token is None

    outcome = store.delete_many([f"{base}/a.json", f"{base}/b.json", f"{base}/absent.json"])
    assert sorted(outcome.deleted) == [f"{base}/a.json", f"{base}/b.json"]
    assert outcome.missing == [f"{base}/absent.json"]
    assert outcome.failed == []
    store.delete(f"{base}/c.json")
    store.delete(f"{base}/c.json")
    assert not store_under_test.exists(f"{base}/c.json")
    assert store_under_test.exists(f"{base}/sub/d.json")


@pytest.mark.parametrize("client", ["obstore", "boto3"])
def test_an_s3_store_refusing_the_credentials_raises_permission_error_without_the_secret(
    client: str, s3: S3View, monkeypatch: pytest.MonkeyPatch
) -> None:
    if client == "boto3":
        monkeypatch.setattr(s3_store, "takes_obstore", lambda _: False)
    secret = uuid.uuid4().hex
    store = S3Store(StoreContext({**s3.properties, "s3.secret-access-key": secret}, attempts=1))
    location = f"s3://{WAREHOUSE_BUCKET}/stores-denied/a.json"
    for request in (lambda: store.read(location), lambda: store.write(location, b"x")):
        with pytest.raises(PermissionError, match="SignatureDoesNotMatch") as denied:
            request()
        assert secret not in str(denied.value)
        assert location in str(denied.value)


def test_one_registry_picks_the_store_by_scheme(tmp_path: Path) -> None:
    context = StoreContext({"adls.account-name": "acct"})
    assert isinstance(open_store("s3a://bucket/t/metadata/v1.json", context), S3Store)
    assert isinstance(open_store("wasbs://c@acct.blob.core.windows.net/t", context), AzureStore)
    assert isinstance(open_store(str(tmp_path / "t"), context), LocalStore)
    assert isinstance(open_store("gs://bucket/t/metadata/v1.json", context), GcsStore)
    assert isinstance(open_store("hdfs://namenode/t/metadata/v1.json", context), FileIOStore)


def test_a_store_without_a_listing_says_so_and_still_reads_and_writes(tmp_path: Path) -> None:
    uri = (tmp_path / "x" / "a.json").as_uri()
    os.makedirs(tmp_path / "x")
    store: Store = FileIOStore(StoreContext({}), uri)
    store.write(uri, b"{}")
    assert store.read(uri) == b"{}"
    head = store.head(uri)
    assert head is not None and head.size == 2
    with pytest.raises(ListingUnsupportedError, match="can't be listed"):
        store.list_page((tmp_path / "x").as_uri(), None, 10, flat=False)


def test_a_store_whose_extra_is_missing_names_the_extra_to_install() -> None:
    """Azure's SDK is an extra (icepurge[azure]): without it, an abfs:// URI fails at once,
    not retried, saying what to install."""
    program = """
import sys
class Blocker:
    def find_spec(self, name, path=None, target=None):
        if name == "azure" or name.startswith("azure."):
            raise ModuleNotFoundError(name)
sys.meta_path.insert(0, Blocker())
from icepurge.stores.registry import open_store
from icepurge.stores.store import StoreContext
try:
    open_store("abfs://c@acct.dfs.core.windows.net/t", StoreContext({}))
except Exception as error:
    print(type(error).__name__, error.non_retryable, error)
"""
    answer = subprocess.run(
        [sys.executable, "-c", program], capture_output=True, text=True, check=True
    ).stdout
    assert answer.startswith("MissingExtraError True")
    assert "icepurge[azure]" in answer


def test_the_sweep_lists_and_deletes_on_azure(
    worker_settings: WorkerSettings, azurite: AzuriteEndpoint, blobs: BlobStore
) -> None:
    location = azurite.location(AZURE_CONTAINER, f"swept-{uuid.uuid4().hex[:8]}")
    assert_sweep_lists_and_deletes(worker_settings, location, blobs)


async def test_a_by_name_purge_sweeps_a_table_on_the_local_disk(
    purges: PurgeClient, disk_catalog: SqlCatalog
) -> None:
    name = f"t{uuid.uuid4().hex[:6]}"
    table = simple_table(disk_catalog, ("swept_disk",), name, appends=2)
    folder = Path(table.location().removeprefix("file://"))
    orphan = folder / "data" / "aborted.parquet"
    orphan.write_bytes(b"never referenced")
    neighbour = folder.parent / f"{folder.name}_kept" / "x.parquet"
    neighbour.parent.mkdir(parents=True)
    neighbour.write_bytes(b"not the table's")
    time.sleep(1.2)
    purge_id = await purges.purge_by_name(
        DISK_CATALOG,
        ["swept_disk"],
        name,
        requested_by="pytest",
        options={"sweep_location": True, "sweep_grace_seconds": 0},
    )
    status = (await purges.wait(purge_id)).status
    assert status.state is PurgeState.SUCCEEDED, status
    assert status.sweep is not None and status.sweep.applied, status.sweep
    assert status.sweep.swept == 1
    assert not orphan.exists()
    assert [path for path in folder.rglob("*") if path.is_file()] == []
    assert neighbour.read_bytes() == b"not the table's"


def test_asking_first_lists_a_folder_once_instead_of_a_head_per_file(
    s3: S3View, deletes: Deletes, monkeypatch: pytest.MonkeyPatch
) -> None:
    """check_existence (a catalog deleted the storage): a folder one listing page holds answers
    for all its files in one request; a bigger folder is asked file by file. Same counts."""
    base = f"s3://{WAREHOUSE_BUCKET}/asked-{uuid.uuid4().hex[:8]}"
    store = open_store(base, StoreContext(s3.properties, deletes=deletes))
    gone = [f"{base}/gone/{index}.parquet" for index in range(20)]
    kept = [f"{base}/kept/{index}.parquet" for index in range(3)]
    for uri in kept:
        store.write(uri, b"x")
    outcome = store.delete_many([*gone, *kept])
    assert sorted(outcome.missing) == sorted(gone) and sorted(outcome.deleted) == sorted(kept)
    # A listing each for the two folders and the one bulk delete, where 23 HEADs were asked before.
    assert outcome.requests == 3, outcome.requests

    monkeypatch.setattr(s3_deletes, "LISTING_PAGE_KEYS", 2)
    for uri in kept:
        store.write(uri, b"x")
    outcome = store.delete_many([*kept, f"{base}/kept/absent.parquet"])
    assert sorted(outcome.deleted) == sorted(kept) and outcome.missing == [f"{base}/kept/absent.parquet"]
    # The folder outgrew a page: one listing, then a HEAD per file, then the bulk delete.
    assert outcome.requests == 1 + 4 + 1, outcome.requests


def test_an_s3_store_behind_a_private_ca_is_read_with_aws_ca_bundle(
    s3: S3View, stack: EmbeddedStack, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, deletes: Deletes
) -> None:
    """boto3 trusts the CAs AWS_CA_BUNDLE names; obstore and the signed bulk delete are given
    them too."""
    files = make_tls_files(tmp_path / "tls")
    location = f"s3://{WAREHOUSE_BUCKET}/stores-tls/{uuid.uuid4().hex[:8]}.json"
    s3.put(location, b"behind a private CA")
    with tls_forwarder(stack.ports.s3, files) as port:
        properties = {**s3.properties, "s3.endpoint": f"https://127.0.0.1:{port}"}
        monkeypatch.setenv("AWS_CA_BUNDLE", str(files.other_ca))
        with pytest.raises(OSError, match=r"Could not connect .*: invalid TLS certificate \(UnknownIssuer\)"):
            S3Store(StoreContext(properties, attempts=1)).read(location)
        monkeypatch.setenv("AWS_CA_BUNDLE", str(files.ca))
        # Another port: a store of its own, built with the bundle named now.
        with tls_forwarder(stack.ports.s3, files) as trusted:
            trusted_properties = {**s3.properties, "s3.endpoint": f"https://127.0.0.1:{trusted}"}
            assert takes_obstore(trusted_properties)
            store = S3Store(StoreContext(trusted_properties, attempts=1))
            assert store.read(location) == b"behind a private CA"
            # The signed bulk delete's session trusts the same bundle.
            store = S3Store(StoreContext(trusted_properties, attempts=1, deletes=deletes))
            assert takes_signed_deletes(trusted_properties)
            outcome = store.delete_many([location])
            assert (outcome.deleted, outcome.failed) == ([location], [])
            assert not s3.exists(location)


@pytest.mark.parametrize("client", ["signed", "boto3"])
def test_a_bulk_delete_names_every_key_as_s3_does(
    s3: S3View, client: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Keys XML must escape, spaces, non-ASCII and slashes reach the store as the keys they are,
    whichever client sends the DeleteObjects; an absent key is answered deleted (S3's way)."""
    if client == "boto3":
        monkeypatch.setenv("ICEPURGE_S3_CLIENT", "boto3")
    assert takes_signed_deletes(s3.properties) is (client == "signed")
    base = f"s3://{WAREHOUSE_BUCKET}/named-{uuid.uuid4().hex[:8]}"
    names = [
        "a&b.parquet",
        "<c>.parquet",
        "d e.parquet",
        "ü\u00e9.parquet",
        "q'\"uote.parquet",
        "f/g.parquet",
    ]
    uris = [f"{base}/{name}" for name in names]
    for uri in uris:
        s3.put(uri, b"x")
    limits = BucketRateLimits(None)
    with ThreadPoolExecutor(max_workers=2) as pool:
        bulk = Deletes(pool, limits, DeleteTuning(), concurrency=2)
        outcome = S3Store(StoreContext(s3.properties, deletes=bulk)).delete_many([*uris, f"{base}/absent"])
    limits.close()
    assert sorted(outcome.deleted) == sorted([*uris, f"{base}/absent"])
    assert (outcome.failed, outcome.requests) == ([], 1)
    assert [uri for uri in uris if s3.exists(uri)] == []


class _Answering(BaseHTTPRequestHandler):
    """A store that answers every DeleteObjects with the server's `answer` (a fault on purpose)."""

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        payload: bytes = self.server.answer  # type: ignore[attr-defined]
        self.send_response(200)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *_: object) -> None:
        return


@pytest.mark.parametrize(
    ("answer", "deleted", "failed"),
    [
        # Quiet mode lists only the keys that failed: an empty answer lists none, as boto3 reads it.
        (b"", ["a", "b"], []),
        (b"<DeleteResult><Error><Key>b</Key><Code>AccessDenied</Code></Error></DeleteResult>", ["a"], ["b"]),
        # A 200 that says nothing readable: no key is counted deleted on its word.
        (b"<html>a captive portal</html", [], ["a", "b"]),
    ],
    ids=["empty", "a key refused", "unreadable"],
)
def test_a_signed_bulk_delete_counts_only_what_the_answer_says(
    answer: bytes, deleted: list[str], failed: list[str], deletes: Deletes
) -> None:
    with ThreadingHTTPServer(("127.0.0.1", 0), _Answering) as server:
        server.answer = answer  # type: ignore[attr-defined]
        threading.Thread(target=server.serve_forever, daemon=True).start()
        properties = {
            "s3.endpoint": f"http://127.0.0.1:{server.server_address[1]}",
            "s3.access-key-id": "fault",
            "s3.secret-access-key": "injected",
        }
        assert takes_signed_deletes(properties)
        bulk = replace(deletes, tuning=DeleteTuning(max_attempts=1))
        outcome = S3Store(StoreContext(properties, deletes=bulk)).delete_many(
            [f"s3://bucket/{key}" for key in ("a", "b")]
        )
        server.shutdown()
    assert sorted(outcome.deleted) == [f"s3://bucket/{key}" for key in deleted]
    assert sorted(uri for uri, _ in outcome.failed) == [f"s3://bucket/{key}" for key in failed]


def test_a_forked_process_sends_signed_deletes_on_connections_of_its_own() -> None:
    """A Spark Python worker or a worker process forks from a parent that may have deleted
    already: sharing its pooled sockets would interleave two processes' requests on one."""
    properties = {"s3.endpoint": "http://127.0.0.1:9", "s3.access-key-id": "k", "s3.secret-access-key": "s"}
    parents = signed_deletes(properties, 4)
    assert signed_deletes(properties, 4) is parents
    readable, writable = os.pipe()
    child = os.fork()
    if child == 0:
        os.write(writable, b"own" if signed_deletes(properties, 4) is not parents else b"shared")
        os._exit(0)
    os.waitpid(child, 0)
    assert os.read(readable, 16) == b"own"
