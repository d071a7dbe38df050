"""Worker Versioning: a worker given a deployment name and a build id polls as that Worker
Deployment Version, and its workflows run with the behaviour ICEPURGE_VERSIONING_BEHAVIOR names.

Auto-upgrade is the default: a purge may wait for days (a soft-delete window, a caller's drop) and
run for hours, and a pinned purge would keep its release's workers alive that long. Every change
to workflow code is replay-safe instead (`icepurge.workflows.shared.upgrades`, each release's histories
replayed by tests/workflows/test_replay.py), so a running purge moves to the current version at its next
workflow task. Pinned suits a rainbow deployment that keeps each version's workers until its
purges drain (the Temporal Worker Controller's): a purge then never leaves the version it began
on, and no worker of another version takes it."""

from __future__ import annotations

from enum import StrEnum

from temporalio.common import VersioningBehavior, WorkerDeploymentVersion
from temporalio.worker import WorkerDeploymentConfig


class WorkflowVersioning(StrEnum):
    AUTO_UPGRADE = "auto_upgrade"
    PINNED = "pinned"


_BEHAVIOURS = {
    WorkflowVersioning.AUTO_UPGRADE: VersioningBehavior.AUTO_UPGRADE,
    WorkflowVersioning.PINNED: VersioningBehavior.PINNED,
}


def deployment_config(
    deployment_name: str | None, build_id: str | None, behaviour: WorkflowVersioning
) -> WorkerDeploymentConfig | None:
    """None for an unversioned worker (no deployment name)."""
    if deployment_name is None or build_id is None:
        return None
    return WorkerDeploymentConfig(
        version=WorkerDeploymentVersion(deployment_name=deployment_name, build_id=build_id),
        use_worker_versioning=True,
        default_versioning_behavior=_BEHAVIOURS[behaviour],
    )
