"""The workflow id of a purge, derived from what identifies the dropped table's snapshot."""

import hashlib
import json

from workflows.constants import WORKFLOW_ID_PREFIX
from workflows.request import PurgeRequest


def purge_id_for(request: PurgeRequest) -> str:
    identity = json.dumps(
        [request.catalog, request.namespace, request.table, request.metadata_location],
        ensure_ascii=False,
        separators=(",", ":"),
    )
    return WORKFLOW_ID_PREFIX + hashlib.sha256(identity.encode()).hexdigest()[:32]
