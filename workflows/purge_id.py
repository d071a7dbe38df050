"""The workflow id of a purge, derived from what identifies the dropped table's snapshot."""

import hashlib
import json

from workflows.constants import WORKFLOW_ID_PREFIX
from workflows.request import PurgeRequest

DRY_RUN_SUFFIX = "-dry-run"


def purge_id_for(request: PurgeRequest) -> str:
    """A dry run has an id of its own, so that the real purge of the same snapshot can follow it."""
    identity = json.dumps(
        [request.catalog, request.namespace, request.table, request.metadata_location],
        ensure_ascii=False,
        separators=(",", ":"),
    )
    suffix = DRY_RUN_SUFFIX if request.options.dry_run else ""
    return WORKFLOW_ID_PREFIX + hashlib.sha256(identity.encode()).hexdigest()[:32] + suffix
