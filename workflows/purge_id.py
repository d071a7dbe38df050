"""The workflow id of a purge, derived from what identifies the dropped table's snapshot, or, for
a purge by name, from the table's identifier (and the caller's request id, when given)."""

import hashlib
import json

from workflows.constants import WORKFLOW_ID_PREFIX
from workflows.request import PurgeRequest

DRY_RUN_SUFFIX = "-dry-run"
BY_NAME_MARK = "by-name"


def purge_id_for(request: PurgeRequest) -> str:
    """A dry run has an id of its own, so that the real purge of the same snapshot can follow it.

    The id is sha256 over compact JSON, first 32 hex digits, behind "icepurge-":
    snapshot: ["<catalog>", [levels], "<table>", "<metadata_location>"];
    by name:  ["by-name", "<catalog>", [levels], "<table>", "<request_id>" or null].
    """
    if request.by_name:
        identity: list[object] = [BY_NAME_MARK, request.catalog, request.namespace, request.table]
        identity.append(request.request_id)
    else:
        identity = [request.catalog, request.namespace, request.table, request.metadata_location]
    text = json.dumps(identity, ensure_ascii=False, separators=(",", ":"))
    suffix = DRY_RUN_SUFFIX if request.options.dry_run else ""
    return WORKFLOW_ID_PREFIX + hashlib.sha256(text.encode()).hexdigest()[:32] + suffix
