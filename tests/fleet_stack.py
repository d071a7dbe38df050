"""A stack whose Temporal and store listen on the services host's own addresses, with the tests'
own hosts (tests.net_hosts) around it, and icepurge workers on those hosts."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from icepurge.contract.counts import CONTENT_CATEGORIES
from icepurge.contract.status import PurgeStatus
from icepurge.devstack.ports import StackPorts
from icepurge.devstack.process import WORKER_READY, ServiceProcess
from icepurge.devstack.stack import EmbeddedStack, StackHosts
from tests.conftest import CONTINUE_AS_NEW_EVENTS
from tests.net_hosts import Host, NetHosts, net_hosts, unavailable
from tests.store import S3Store

QUEUE = "icepurge-fleet"
WORKER = ["icepurge.api.cli.main", "worker"]
# Asked once, at import: each asking makes and removes a namespace.
_NO_HOSTS = unavailable()
needs_hosts = pytest.mark.skipif(_NO_HOSTS is not None, reason=str(_NO_HOSTS))


@contextmanager
def fleet_stack(state_dir: Path) -> Iterator[tuple[EmbeddedStack, NetHosts]]:
    with net_hosts() as hosts:
        stack = EmbeddedStack(
            state_dir=state_dir,
            ports=StackPorts.free(),
            dynamic_config={"limit.historyCount.suggestContinueAsNew": str(CONTINUE_AS_NEW_EVENTS)},
            hosts=StackHosts(temporal=hosts.temporal_address, store=hosts.store_address),
            snapshot_only_catalogs=("tests",),
        )
        stack.start()
        try:
            yield stack, hosts
        finally:
            stack.stop()


def fleet_worker(
    stack: EmbeddedStack, host: Host, settings: dict[str, str], module: list[str] = WORKER
) -> ServiceProcess:
    """An icepurge worker on `host` (`module`: another worker's, run with -m)."""
    worker = ServiceProcess(
        f"worker-{host.name}",
        host.command([sys.executable, "-m", *module]),
        stack.state_dir / "logs" / f"worker-{host.name}.log",
        env=stack.worker_env(ICEPURGE_TASK_QUEUE=QUEUE, **settings),
    )
    worker.start()
    worker.wait_for_log(WORKER_READY)
    return worker


def log_of(process: ServiceProcess) -> str:
    return Path(process.log_path).read_text(errors="replace")


def content_counted(status: PurgeStatus) -> int:
    """The content files a purge counted, deleted or found already gone: each once."""
    return sum(
        status.counts.of(category).deleted + status.counts.of(category).already_missing
        for category in CONTENT_CATEGORIES
    )


def assert_only_the_report_left(s3: S3Store, status: PurgeStatus, why: str) -> None:
    """The purge's plan folder holds its report and nothing a late writer put there."""
    assert status.report_location is not None
    plan_folder = status.report_location.rsplit("/", 1)[0]
    left = s3.list(plan_folder + "/")
    assert left == {status.report_location}, f"{why}: {sorted(left - {status.report_location})}"
