"""The workflow id of a purge, derived from what identifies the dropped table's snapshot, or, for
a purge by name, from the table's identifier (and the caller's request id, when given).

An id reads as what it purges and stays unique by a hash:
    "icepurge-" + readable + "-" + hash [+ "-dry-run"]
readable: the names joined by dots (catalog, levels, table), every run of characters other than
A-Z a-z 0-9 _ . replaced by one "_", cut to 120 characters. It never holds a "-", so a table
purge's id can't begin like a namespace purge's ("icepurge-ns-").
hash: sha256 over the compact JSON of the identity (UTF-8, separators "," and ":"), first 32 hex
digits."""

import hashlib
import json
import re

from icepurge.contract.names import WORKFLOW_ID_PREFIX
from icepurge.contract.request import PurgeRequest

DRY_RUN_SUFFIX = "-dry-run"
BY_NAME_MARK = "by-name"
READABLE_LIMIT = 120
_UNREADABLE = re.compile(r"[^A-Za-z0-9_.]+")


def derived_id(prefix: str, names: list[str], identity: list[object], dry_run: bool) -> str:
    readable = _UNREADABLE.sub("_", ".".join(names))[:READABLE_LIMIT]
    text = json.dumps(identity, ensure_ascii=False, separators=(",", ":"))
    digest = hashlib.sha256(text.encode()).hexdigest()[:32]
    return f"{prefix}{readable}-{digest}{DRY_RUN_SUFFIX if dry_run else ''}"


def purge_id_for(request: PurgeRequest) -> str:
    """A dry run has an id of its own, so that the real purge of the same snapshot can follow it.

    The identity hashed:
    snapshot: ["<catalog>", [levels], "<table>", "<metadata_location>"];
    by name:  ["by-name", "<catalog>", [levels], "<table>", "<request_id>" or null].
    """
    if request.by_name:
        identity: list[object] = [BY_NAME_MARK, request.catalog, request.namespace, request.table]
        identity.append(request.request_id)
    else:
        identity = [request.catalog, request.namespace, request.table, request.metadata_location]
    names = [request.catalog, *request.namespace, request.table]
    return derived_id(WORKFLOW_ID_PREFIX, names, identity, request.options.dry_run)
