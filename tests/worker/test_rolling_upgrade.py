"""A rolling upgrade with purges in flight, on Temporal's Worker Versioning.

The old release (2bb8934, the Makefile's OLD_RELEASE: before slim batches and table ranges) runs
from its own source and venv (`make old-release`) as unversioned workers, the way a fleet runs
before it adopts versioning. It starts a throttled purge of a 2,000-file table, a namespace purge
by name and a soft-deleted purge waiting out its window. Today's workers join as a Worker
Deployment Version, that version is made current, and the old worker is stopped with SIGTERM (its
grace) mid-purge: every purge finishes exact, on the new version (auto-upgrade).

Pinned: a purge begun on a version whose workers then stop is never taken by a worker of
another version, however long it waits; a worker of its own version finishes it."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError
from pyiceberg.catalog.sql import SqlCatalog
from temporalio.api.enums.v1 import EventType, VersioningBehavior
from temporalio.api.workflowservice.v1 import SetWorkerDeploymentCurrentVersionRequest
from temporalio.client import Client
from temporalio.common import VersioningBehavior as CommonVersioningBehavior
from temporalio.service import RPCError

from icepurge.api.clients.temporal_client import PurgeClient
from icepurge.contract.namespace_status import NAMESPACE_TERMINAL_STATES, NamespacePurgeState
from icepurge.contract.states import TERMINAL_STATES, PurgeState
from icepurge.contract.status import PurgeStatus
from icepurge.devstack.process import WORKER_READY, ServiceProcess, stop_together
from icepurge.devstack.stack import EmbeddedStack
from icepurge.devstack.synthetic_table import TableShape, synthetic_table
from icepurge.worker.settings import WorkerSettings
from icepurge.worker.versioning import WorkflowVersioning
from tests.conftest import LAKE_CATALOG
from tests.paths import TESTS
from tests.purge_helpers import assert_counts_add_up, eventually, status_when
from tests.store import S3Store
from tests.tables import simple_table

# Chunks of 200 files deleted 50 keys a request, 1.5 requests a second: the 2,000-file purge
# takes ~30 s, long enough to be mid-way when the old worker stops.
WORKER_ENV = {
    "ICEPURGE_CHUNK_TARGET_FILES": "200",
    "ICEPURGE_DELETE_BATCH_FILES": "50",
    "ICEPURGE_SHUTDOWN_GRACE_SECONDS": "5",
}
BUDGET = 1.5
OLD_RELEASE_STARTS = TESTS / "old_release_starts.py"
SOFT_WINDOW_SECONDS = 25


def _old_release() -> Path:
    folder = os.environ.get("ICEPURGE_OLD_RELEASE_DIR")
    if not folder or not (Path(folder) / ".installed").exists():
        pytest.skip("no old release to upgrade from: `make old-release` builds it (`make test` does)")
    return Path(folder)


class Fleet:
    """Worker processes of either release on one task queue, stopped at the end."""

    def __init__(self, stack: EmbeddedStack, queue: str) -> None:
        self._stack, self.queue = stack, queue
        # A Worker Deployment of this fleet's own: the server refuses a current version that
        # lacks a task queue the deployment's current version still has traffic on, so a
        # deployment shared with another test's queue could refuse this one's for a while.
        self.deployment = queue
        self.workers: list[ServiceProcess] = []

    def old(self, name: str, release: Path) -> ServiceProcess:
        python = str(release / "venv" / "bin" / "python")
        # -I: the old release's own icepurge, never one PYTHONPATH or the working directory names.
        command = [python, "-I", "-m", "icepurge.api.cli.main", "worker"]
        return self._start(ServiceProcess(name, command, self._log(name), env=self._env()))

    def start_on_old(self, release: Path, plan: dict[str, Any]) -> dict[str, str]:
        """Purges started by the old release's own client (its API would send the same)."""
        command = [str(release / "venv" / "bin" / "python"), "-I", str(OLD_RELEASE_STARTS)]
        started = subprocess.run(
            command,
            input=json.dumps(plan),
            env={**os.environ, **self._env()},
            capture_output=True,
            text=True,
            check=False,
        )
        assert started.returncode == 0, started.stderr
        ids: dict[str, str] = json.loads(started.stdout)
        return ids

    def new(self, name: str, build_id: str, behaviour: str = "auto_upgrade") -> ServiceProcess:
        env = self._env(
            ICEPURGE_DEPLOYMENT_NAME=self.deployment,
            ICEPURGE_BUILD_ID=build_id,
            ICEPURGE_VERSIONING_BEHAVIOR=behaviour,
        )
        return self._start(self._stack.worker_process(name, **env))

    def stop_all(self) -> None:
        stop_together(self.workers, grace=10.0)

    def _env(self, **extra: str) -> dict[str, str]:
        return self._stack.worker_env(ICEPURGE_TASK_QUEUE=self.queue, **WORKER_ENV, **extra)

    def _log(self, name: str) -> Path:
        return self._stack.state_dir / "logs" / f"{name}.log"

    def _start(self, worker: ServiceProcess) -> ServiceProcess:
        worker.start()
        self.workers.append(worker)
        worker.wait_for_log(WORKER_READY)
        return worker


@pytest.fixture
def fleet(stack: EmbeddedStack) -> Iterator[Fleet]:
    workers = Fleet(stack, f"icepurge-upgrade-{uuid.uuid4().hex[:6]}")
    try:
        yield workers
    finally:
        workers.stop_all()


async def _make_current(client: Client, fleet: Fleet, build_id: str) -> None:
    """Once the version's workers have polled (the server knows the version by then)."""

    async def refused() -> str | None:
        """Why the server refused, or None once it took it."""
        try:
            await client.workflow_service.set_worker_deployment_current_version(
                SetWorkerDeploymentCurrentVersionRequest(
                    namespace=client.namespace,
                    deployment_name=fleet.deployment,
                    build_id=build_id,
                    identity="upgrade",
                )
            )
        except RPCError as error:
            return f"{error.status.name}: {error.message}"
        return None

    await eventually(refused, lambda reason: reason is None, seconds=30)


async def _version_of(client: Client, workflow_id: str) -> tuple[int, str]:
    """The workflow's versioning behaviour and the build it runs on."""
    described = await client.get_workflow_handle(workflow_id).describe()
    info = described.raw_description.workflow_execution_info.versioning_info
    return info.behavior, info.deployment_version.build_id


def _exact(status: PurgeStatus) -> None:
    assert status.state is PurgeState.SUCCEEDED, status
    assert_counts_add_up(status)
    assert status.counts.total().failed == 0


async def test_a_rolling_upgrade_from_the_old_release_finishes_every_purge_in_flight_exact(
    fleet: Fleet,
    stack: EmbeddedStack,
    catalog: SqlCatalog,
    lake: SqlCatalog,
    s3: S3Store,
    temporal_client: Client,
) -> None:
    release = _old_release()
    own = subprocess.run(
        [release / "venv" / "bin" / "python", "-I", "-c", "import icepurge; print(icepurge.__file__)"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert Path(own.stdout.strip()).is_relative_to(release / "src"), own.stdout
    purges = PurgeClient(temporal_client, fleet.queue)
    tag = uuid.uuid4().hex[:6]
    big = synthetic_table(
        catalog, ("upgrade", f"big{tag}"), TableShape(manifests=20, files_per_manifest=100, snapshots=4)
    )
    spaces = [f"spaced{tag}"]
    for index in range(6):
        simple_table(lake, (spaces[0],), f"t{index}", appends=1)
    soft = simple_table(lake, ("upgrade",), f"soft{tag}", appends=2)
    locations = {"big": big.location(), "soft": soft.location()}

    old = fleet.old("old-worker", release)
    ids = fleet.start_on_old(
        release,
        {
            "big": {
                "catalog": "tests",
                "namespace": ["upgrade"],
                "table": f"big{tag}",
                "metadata_location": big.metadata_location,
                "file_io_properties": s3.properties,
                "requested_by": "upgrade",
                "options": {"bucket_requests_per_second": BUDGET, "express_lane": False},
            },
            "namespace": {
                "catalog": LAKE_CATALOG,
                "namespace": spaces,
                "requested_by": "upgrade",
                "max_concurrent_tables": 1,
                "options": {"bucket_requests_per_second": 1.0},
            },
            "soft": {
                "catalog": LAKE_CATALOG,
                "namespace": ["upgrade"],
                "table": f"soft{tag}",
                "requested_by": "upgrade",
                "options": {"purge_after_seconds": SOFT_WINDOW_SECONDS},
            },
        },
    )
    big_id, namespace_id, soft_id = ids["big"], ids["namespace"], ids["soft"]
    # Each mid-way on the old release: chunks deleted, a table purged, the table dropped.
    await status_when(purges, big_id, lambda status: status.chunks_done >= 1)
    await eventually(lambda: purges.namespaces.status(namespace_id), lambda status: status.tables_done >= 1)
    await status_when(purges, soft_id, lambda status: status.dropped_at is not None)

    fleet.new("new-worker", "new")
    await _make_current(temporal_client, fleet, "new")
    old.terminate()
    old.wait_or_kill(deadline=float("inf"))
    # Still in flight when the old worker went: the new release finishes each.
    assert (await purges.status(big_id)).state not in TERMINAL_STATES
    assert (await purges.status(soft_id)).state not in TERMINAL_STATES
    assert (await purges.namespaces.status(namespace_id)).state not in NAMESPACE_TERMINAL_STATES

    big_status = (await purges.wait(big_id)).status
    _exact(big_status)
    assert s3.list(locations["big"]) == set()
    soft_status = (await purges.wait(soft_id)).status
    _exact(soft_status)
    assert s3.list(locations["soft"]) == set()
    spaced = await purges.namespaces.wait(namespace_id)
    assert spaced.status.state is NamespacePurgeState.SUCCEEDED, spaced.status
    assert (spaced.status.tables_done, spaced.status.tables_failed) == (6, 0)
    # Its tables dropped and purged, then the namespace, emptied, dropped too.
    assert not lake.namespace_exists((spaces[0],))
    for purge_id in (big_id, soft_id, namespace_id):
        assert await _version_of(temporal_client, purge_id) == (
            VersioningBehavior.VERSIONING_BEHAVIOR_AUTO_UPGRADE,
            "new",
        )


async def test_a_pinned_purge_waits_for_a_worker_of_its_own_version(
    fleet: Fleet, lake: SqlCatalog, s3: S3Store, temporal_client: Client
) -> None:
    purges = PurgeClient(temporal_client, fleet.queue)
    tag = uuid.uuid4().hex[:6]
    pinned_table = simple_table(lake, ("pinned",), f"kept{tag}", appends=2)
    first = fleet.new("pinned-worker-a", "a", behaviour="pinned")
    await _make_current(temporal_client, fleet, "a")
    pinned = await purges.purge_by_name(
        LAKE_CATALOG, ["pinned"], f"kept{tag}", requested_by="pinned", options={"purge_after_seconds": 3}
    )
    await status_when(purges, pinned, lambda status: status.dropped_at is not None)
    assert await _version_of(temporal_client, pinned) == (VersioningBehavior.VERSIONING_BEHAVIOR_PINNED, "a")
    first.terminate()
    first.wait_or_kill(deadline=float("inf"))

    fleet.new("pinned-worker-b", "b", behaviour="pinned")
    await _make_current(temporal_client, fleet, "b")
    # Version b purges what is started now, while the pinned purge's window runs out.
    later_table = simple_table(lake, ("pinned",), f"later{tag}", appends=1)
    later = await purges.purge_by_name(LAKE_CATALOG, ["pinned"], f"later{tag}", requested_by="pinned")
    _exact((await purges.wait(later)).status)
    assert s3.list(later_table.location()) == set()
    assert await _version_of(temporal_client, later) == (VersioningBehavior.VERSIONING_BEHAVIOR_PINNED, "b")

    async def history_types() -> list[int]:
        history = await temporal_client.get_workflow_handle(pinned).fetch_history()
        return [event.event_type for event in history.events]

    # Its window has run out, and a workflow task waits for it; b never starts it.
    fired = await eventually(history_types, lambda types: EventType.EVENT_TYPE_TIMER_FIRED in types)
    await asyncio.sleep(5)
    after = await history_types()
    tail = after[fired.index(EventType.EVENT_TYPE_TIMER_FIRED) :]
    assert EventType.EVENT_TYPE_WORKFLOW_TASK_STARTED not in tail, tail
    assert s3.list(pinned_table.location())

    fleet.new("pinned-worker-a-again", "a", behaviour="pinned")
    _exact((await purges.wait(pinned)).status)
    assert s3.list(pinned_table.location()) == set()


def test_a_worker_is_versioned_by_a_deployment_name_and_a_build_id_together() -> None:
    state = "file:///tmp/icepurge-state"
    assert WorkerSettings(state_location=state).deployment_config() is None
    pinned = WorkerSettings(
        state_location=state,
        deployment_name="purges",
        build_id="2026.11",
        versioning_behavior=WorkflowVersioning.PINNED,
    ).deployment_config()
    assert pinned is not None and pinned.use_worker_versioning
    assert (pinned.version.deployment_name, pinned.version.build_id) == ("purges", "2026.11")
    assert pinned.default_versioning_behavior is CommonVersioningBehavior.PINNED
    default = WorkerSettings(
        state_location=state, deployment_name="purges", build_id="2026.11"
    ).deployment_config()
    assert (
        default is not None and default.default_versioning_behavior is CommonVersioningBehavior.AUTO_UPGRADE
    )
    refused = "needs both ICEPURGE_DEPLOYMENT_NAME and ICEPURGE_BUILD_ID"
    with pytest.raises(ValidationError, match=refused):
        WorkerSettings(state_location=state, deployment_name="purges")
    with pytest.raises(ValidationError, match=refused):
        WorkerSettings(state_location=state, build_id="2026.11")
    with pytest.raises(ValidationError, match="deployment_name"):
        WorkerSettings(state_location=state, deployment_name="icepurge.prod", build_id="1")
