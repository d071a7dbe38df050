"""Session fixtures: one real embedded stack (Temporal dev server + SeaweedFS) on free ports, an
in-process worker, a PyIceberg SQLite catalog writing to the stack's S3."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from pyiceberg.catalog.rest import RestCatalog
from pyiceberg.catalog.sql import SqlCatalog
from temporalio.client import Client
from temporalio.worker import Worker

from icepurge.api.clients.temporal_client import PurgeClient
from icepurge.api.server.front_door.policy import FrontDoorAuth, FrontDoorPolicy
from icepurge.api.server.settings import ApiSettings
from icepurge.connection.connect import connect
from icepurge.devstack.api_server import serve_api
from icepurge.devstack.azurite import AzuriteEndpoint, azurite_server, azurite_unavailable, create_containers
from icepurge.devstack.catalog_env import pyiceberg_catalog_env
from icepurge.devstack.fake_gcs import FakeGcsEndpoint, create_buckets, fake_gcs_server
from icepurge.devstack.free_ports import free_ports
from icepurge.devstack.ports import StackPorts
from icepurge.devstack.postgres import PostgresServer
from icepurge.devstack.process import ServiceProcess
from icepurge.devstack.s3_proxy import FaultPlan, s3_proxy
from icepurge.devstack.stack import EmbeddedStack
from icepurge.worker.run import activity_pool, build_worker
from icepurge.worker.sandbox_runner import sandboxed_runner
from icepurge.worker.settings import WorkerSettings
from tests.api_server import CATALOG_A, CATALOG_B, token_file
from tests.blob_store import BlobStore
from tests.engines_front_door import ReferenceFrontDoor, reference_front_door
from tests.file_order import longest_first
from tests.gcs_objects import GcsObjects
from tests.listener_workflow import EventListener
from tests.state_dirs import session_state_dir
from tests.store import S3Store

# Catalogs the test workers and API know by name, the PyIceberg way (environment variables). The
# other tests' catalogs stay unknown to them, declared snapshot-only: their purges work from
# snapshots alone. Any other name is refused.
# The front door's pass-through catalog, whose upstream is the API's own service-mode front door
# (a REST catalog that authorizes bearer tokens), is one: its workers hold no credential for it.
PASS_THROUGH_CATALOG = "passthrough"
# PASS_THROUGH_CATALOG again, its upstream reached through UPSTREAM_ANSWERS's proxy.
SLOW_PASS_THROUGH_CATALOG = "slowpassthrough"
SNAPSHOT_ONLY_CATALOGS = (
    "tests",
    CATALOG_A,
    CATALOG_B,
    "api-paged",
    PASS_THROUGH_CATALOG,
    SLOW_PASS_THROUGH_CATALOG,
)
LAKE_CATALOG = "lake"
# The same kind of catalog (PyIceberg's SQL catalog) on PostgreSQL.
POSTGRES_CATALOG = "pglake"
REST_CATALOG = "tablebucket"
# The same REST catalog, served by the front door in dry-run-only mode.
REHEARSAL_CATALOG = "rehearsal"
# The same REST catalog again, where a DELETE that doesn't say purgeRequested is a purge.
UNSAID_PURGE_CATALOG = "purgesall"
# And again, where a drop with purge holds the table in HOLD_NAMESPACE and answers.
HOLDING_CATALOG = "holding"
HOLD_NAMESPACE = "icepurge_held"
# REST_CATALOG (plan first) and HOLDING_CATALOG again, each call to SeaweedFS through a proxy that
# can hold back an answer after SeaweedFS acted (upstream_answers): the window between a drop and
# the purge recording it, opened on purpose.
SLOW_ANSWERS_CATALOG = "slowanswers"
SLOW_HOLDING_CATALOG = "slowholding"
# Tables on the local disk, known by name: the location sweep lists a folder there.
DISK_CATALOG = "disk"
# Only the whole-catalog purge test touches it: purging a whole catalog must not reach the others.
ATTIC_CATALOG = "attic"
REST_TABLE_BUCKET = "icepurge-tables"
AZURE_CONTAINER = "warehouse"
GCS_BUCKET = "lake"
# Low enough that a few-hundred-file test table crosses continue-as-new several times.
CONTINUE_AS_NEW_EVENTS = 60
TEST_CHUNK_FILES = 40
# Pages of a few names: every namespace purge's list spans several page objects.
TEST_LIST_PAGE_ENTRIES = 3
# Where EventListener workflows (tests/listener_workflow.py) run.
LISTENER_QUEUE = "icepurge-listener"


# What marks a test file as the system tier: it starts the service's own processes (the API, a
# worker, the CLI), a browser or a container.
_PROCESS_MARKS = (
    "subprocess",
    "ServiceProcess",
    "start_dying_worker",
    "tests.cli_runner",
    "tests.api_server",
)
TIERS = ("fast", "integration", "system", "chaos")


def _tier(item: pytest.Item, source: str) -> str:
    """fast: no stack and no process (replay, workflow logic on an in-memory dev server of its
    own, import rules, models, planners on local files); integration: the embedded stack (Temporal,
    SeaweedFS, the SQLite catalog) with the worker in the test's own process; system: the service's
    processes, a browser or a container; chaos: kills and faults."""
    if item.get_closest_marker("chaos"):
        return "chaos"
    fixtures = set(getattr(item, "fixturenames", ()))
    if (
        item.get_closest_marker("docker")
        or item.get_closest_marker("browser")
        or "_api_and_answers" in fixtures
        or any(mark in source for mark in _PROCESS_MARKS)
    ):
        return "system"
    return "integration" if "_stack_and_answers" in fixtures else "fast"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Each test gets its tier's marker (`-m fast`, `make test-fast`), from what it needs; the
    files run longest first (tests/file_order.py)."""
    sources: dict[Path, str] = {}
    for item in items:
        path = Path(str(item.path))
        if path not in sources:
            sources[path] = path.read_text()
        item.add_marker(_tier(item, sources[path]))
    items[:] = longest_first(items)


def _disk_properties(stack: EmbeddedStack) -> dict[str, str]:
    warehouse = stack.state_dir / "disk-warehouse"
    warehouse.mkdir(exist_ok=True)
    return {"uri": stack.catalog_uri, "warehouse": warehouse.as_uri()}


@pytest.fixture(scope="session")
def disk_catalog(stack: EmbeddedStack) -> SqlCatalog:
    """The DISK_CATALOG the workers know by name, as a test writes tables to it."""
    return SqlCatalog(DISK_CATALOG, **_disk_properties(stack))


@pytest.fixture(scope="session")
def _stack_and_answers(request: pytest.FixtureRequest) -> Iterator[tuple[EmbeddedStack, FaultPlan]]:
    with session_state_dir(lambda: request.session.testsfailed) as root:
        yield from _started_stack(root)


def _started_stack(root: Path) -> Iterator[tuple[EmbeddedStack, FaultPlan]]:
    embedded = EmbeddedStack(
        state_dir=root,
        ports=StackPorts.free(),
        dynamic_config={"limit.historyCount.suggestContinueAsNew": str(CONTINUE_AS_NEW_EVENTS)},
        snapshot_only_catalogs=SNAPSHOT_ONLY_CATALOGS,
    )
    embedded.start()
    # Beside the stack's folder, not in it: as root the server runs as nobody, who can't enter it.
    postgres = PostgresServer(Path(tempfile.mkdtemp(prefix="icepurge-postgres-")), free_ports(1)[0])
    try:
        embedded.create_table_bucket(REST_TABLE_BUCKET)
        for name in (LAKE_CATALOG, ATTIC_CATALOG):
            os.environ.update(pyiceberg_catalog_env(name, embedded.catalog_properties(name)))
        postgres.start()
        os.environ.update(
            pyiceberg_catalog_env(
                POSTGRES_CATALOG,
                {**embedded.catalog_properties(POSTGRES_CATALOG), "uri": postgres.sqlalchemy_uri},
            )
        )
        for name in (REST_CATALOG, REHEARSAL_CATALOG, UNSAID_PURGE_CATALOG, HOLDING_CATALOG):
            os.environ.update(
                pyiceberg_catalog_env(name, embedded.rest_catalog_properties(REST_TABLE_BUCKET))
            )
        os.environ.update(pyiceberg_catalog_env(DISK_CATALOG, {"type": "sql", **_disk_properties(embedded)}))
        with s3_proxy(embedded.ports.iceberg_rest) as (port, answers):
            proxied = {
                **embedded.rest_catalog_properties(REST_TABLE_BUCKET),
                "uri": f"http://127.0.0.1:{port}",
            }
            for name in (SLOW_ANSWERS_CATALOG, SLOW_HOLDING_CATALOG):
                os.environ.update(pyiceberg_catalog_env(name, proxied))
            yield embedded, answers
    finally:
        postgres.stop()
        shutil.rmtree(postgres.data_dir, ignore_errors=True)
        embedded.stop()


@pytest.fixture(scope="session")
def stack(_stack_and_answers: tuple[EmbeddedStack, FaultPlan]) -> EmbeddedStack:
    return _stack_and_answers[0]


@pytest.fixture(scope="session")
def upstream_answers(_stack_and_answers: tuple[EmbeddedStack, FaultPlan]) -> FaultPlan:
    """The proxy between SLOW_ANSWERS_CATALOG / SLOW_HOLDING_CATALOG and SeaweedFS's REST catalog."""
    return _stack_and_answers[1]


@pytest.fixture(scope="session")
def s3(stack: EmbeddedStack) -> S3Store:
    return S3Store(stack.s3_properties)


@pytest.fixture(scope="session")
def rest_upstream(stack: EmbeddedStack) -> RestCatalog:
    """SeaweedFS's REST catalog called directly (SigV4): the front door's upstream. It deletes a
    table's storage when it drops it."""
    properties = stack.rest_catalog_properties(REST_TABLE_BUCKET)
    properties.pop("type")
    return RestCatalog(REST_CATALOG, **properties)


@contextmanager
def _served(server: ServiceProcess, port: int, ready: Callable[[], None]) -> Iterator[None]:
    """A store emulator beside the stack, serving once `ready` (its buckets made) returned."""
    server.start()
    try:
        server.wait_for_port(port)
        ready()
        yield
    finally:
        server.stop()


@pytest.fixture(scope="session")
def azurite(stack: EmbeddedStack) -> Iterator[AzuriteEndpoint]:
    """Azurite on a free loopback port beside the stack; the tier skips, saying why, without Node."""
    reason = azurite_unavailable()
    if reason is not None:
        pytest.skip(reason)
    endpoint = AzuriteEndpoint(free_ports(1)[0])
    server = azurite_server(stack.state_dir, endpoint.port)
    with _served(server, endpoint.port, lambda: create_containers(endpoint, [AZURE_CONTAINER])):
        yield endpoint


@pytest.fixture(scope="session")
def blobs(azurite: AzuriteEndpoint) -> BlobStore:
    return BlobStore(azurite)


@pytest.fixture(scope="session")
def azure_catalog(stack: EmbeddedStack, azurite: AzuriteEndpoint) -> SqlCatalog:
    """A SQLite catalog whose tables PyIceberg writes to Azurite at abfs:// locations."""
    return SqlCatalog(
        "azure",
        uri=stack.catalog_uri,
        warehouse=azurite.location(AZURE_CONTAINER, "azure"),
        **azurite.properties(),
    )


@pytest.fixture(scope="session")
def fake_gcs(stack: EmbeddedStack) -> Iterator[FakeGcsEndpoint]:
    """fake-gcs-server on a free loopback port beside the stack (built by `make engines`)."""
    endpoint = FakeGcsEndpoint(free_ports(1)[0])
    server = fake_gcs_server(stack.state_dir, endpoint.port)
    with _served(server, endpoint.port, lambda: create_buckets(endpoint, [GCS_BUCKET])):
        yield endpoint


@pytest.fixture(scope="session")
def gcs_objects(fake_gcs: FakeGcsEndpoint) -> GcsObjects:
    return GcsObjects(fake_gcs)


@pytest.fixture(scope="session")
def gcs_catalog(stack: EmbeddedStack, fake_gcs: FakeGcsEndpoint) -> SqlCatalog:
    """A SQLite catalog whose tables PyIceberg writes to fake-gcs-server at gs:// locations."""
    return SqlCatalog(
        "gcs", uri=stack.catalog_uri, warehouse=fake_gcs.location(GCS_BUCKET, "gcs"), **fake_gcs.properties()
    )


@pytest.fixture(scope="session")
def worker_settings(stack: EmbeddedStack) -> WorkerSettings:
    env = stack.worker_env()
    return WorkerSettings(
        temporal_address=env["ICEPURGE_TEMPORAL_ADDRESS"],
        state_location=env["ICEPURGE_STATE_LOCATION"],
        state_io_properties=json.loads(env["ICEPURGE_STATE_IO_PROPERTIES"]),
        chunk_target_files=TEST_CHUNK_FILES,
        task_queue="icepurge-tests",
        delete_max_attempts=3,
        codec_keys=stack.codec_keys,
        snapshot_only_catalogs=list(SNAPSHOT_ONLY_CATALOGS),
        table_list_page_entries=TEST_LIST_PAGE_ENTRIES,
    )


@pytest.fixture(scope="session")
def metrics_port() -> int:
    """Where the in-process test worker serves Prometheus /metrics."""
    return free_ports(1)[0]


@pytest.fixture(scope="session")
async def temporal_client(worker_settings: WorkerSettings, metrics_port: int) -> Client:
    return await connect(worker_settings, metrics_address=f"127.0.0.1:{metrics_port}")


@pytest.fixture(scope="session")
async def running_worker(temporal_client: Client, worker_settings: WorkerSettings) -> AsyncIterator[None]:
    with activity_pool(worker_settings) as pool:
        async with build_worker(temporal_client, worker_settings, pool):
            yield


@pytest.fixture(scope="session")
def purges(temporal_client: Client, worker_settings: WorkerSettings, running_worker: None) -> PurgeClient:
    return PurgeClient(temporal_client, worker_settings.task_queue)


@pytest.fixture(scope="session")
def catalog(stack: EmbeddedStack) -> SqlCatalog:
    return stack.catalog("tests")


@pytest.fixture(scope="session")
def pglake(stack: EmbeddedStack) -> SqlCatalog:
    """POSTGRES_CATALOG as the workers know it by name (PyIceberg read its variables at import,
    before the stack set them)."""
    properties = stack.catalog_properties(POSTGRES_CATALOG)
    properties.pop("type")
    properties["uri"] = os.environ[f"PYICEBERG_CATALOG__{POSTGRES_CATALOG.upper()}__URI"]
    return SqlCatalog(POSTGRES_CATALOG, **properties)


@pytest.fixture(scope="session")
def lake(stack: EmbeddedStack) -> SqlCatalog:
    """The catalog the workers know by name: what a purge by name drops."""
    return stack.catalog(LAKE_CATALOG)


@pytest.fixture(scope="session")
def api_settings(worker_settings: WorkerSettings, tmp_path_factory: pytest.TempPathFactory) -> ApiSettings:
    return ApiSettings(
        temporal_address=worker_settings.temporal_address,
        task_queue=worker_settings.task_queue,
        api_auth_file=token_file(tmp_path_factory.mktemp("api")),
        api_max_body_bytes=64 * 1024,
        max_concurrent_units=512,
        codec_keys=worker_settings.codec_keys,
        snapshot_only_catalogs=worker_settings.snapshot_only_catalogs,
        state_location=worker_settings.state_location,
        state_io_properties=worker_settings.state_io_properties,
        front_door={
            REST_CATALOG: FrontDoorPolicy(),
            REHEARSAL_CATALOG: FrontDoorPolicy(dry_run_only=True),
            UNSAID_PURGE_CATALOG: FrontDoorPolicy(purge_unspecified_drops=True),
            HOLDING_CATALOG: FrontDoorPolicy(hold_namespace=HOLD_NAMESPACE),
            PASS_THROUGH_CATALOG: FrontDoorPolicy(auth=FrontDoorAuth.PASS_THROUGH),
            SLOW_PASS_THROUGH_CATALOG: FrontDoorPolicy(auth=FrontDoorAuth.PASS_THROUGH),
            SLOW_ANSWERS_CATALOG: FrontDoorPolicy(),
            SLOW_HOLDING_CATALOG: FrontDoorPolicy(hold_namespace=HOLD_NAMESPACE),
        },
    )


@pytest.fixture(scope="session")
def _api_and_answers(
    api_settings: ApiSettings, purges: PurgeClient, stack: EmbeddedStack
) -> Iterator[tuple[str, FaultPlan]]:
    port = free_ports(1)[0]
    url = f"http://127.0.0.1:{port}"
    chained = {
        "type": "rest",
        "uri": f"{url}/iceberg/{REST_CATALOG}",
        "warehouse": f"s3://{REST_TABLE_BUCKET}/",
        **stack.s3_properties,
    }
    os.environ.update(pyiceberg_catalog_env(PASS_THROUGH_CATALOG, chained))
    with s3_proxy(port) as (proxy_port, answers):
        slow = {**chained, "uri": f"http://127.0.0.1:{proxy_port}/iceberg/{REST_CATALOG}"}
        os.environ.update(pyiceberg_catalog_env(SLOW_PASS_THROUGH_CATALOG, slow))
        with serve_api(api_settings, port=port):
            yield url, answers


@pytest.fixture(scope="session")
def api_url(_api_and_answers: tuple[str, FaultPlan]) -> str:
    """The HTTP API on a real server, purging through the in-process test worker. Its front door
    serves PASS_THROUGH_CATALOG in front of its own REST_CATALOG, known to the API only (and
    SLOW_PASS_THROUGH_CATALOG likewise, through pass_through_answers's proxy)."""
    return _api_and_answers[0]


@pytest.fixture(scope="session")
def pass_through_answers(_api_and_answers: tuple[str, FaultPlan]) -> FaultPlan:
    """The proxy between SLOW_PASS_THROUGH_CATALOG and the API's front door of REST_CATALOG."""
    return _api_and_answers[1]


@pytest.fixture
async def listener(temporal_client: Client) -> AsyncIterator[None]:
    async with Worker(
        temporal_client,
        task_queue=LISTENER_QUEUE,
        workflows=[EventListener],
        workflow_runner=sandboxed_runner(),
    ):
        yield


@pytest.fixture(scope="module")
async def reference(
    stack: EmbeddedStack,
    temporal_client: Client,
    worker_settings: WorkerSettings,
    api_settings: ApiSettings,
    tmp_path_factory: pytest.TempPathFactory,
) -> AsyncIterator[ReferenceFrontDoor]:
    """The engines tier's front door, its upstream Apache Iceberg's own REST catalog server."""
    async with reference_front_door(
        stack, temporal_client, worker_settings, api_settings, tmp_path_factory.mktemp("iceberg-rest")
    ) as door:
        yield door
