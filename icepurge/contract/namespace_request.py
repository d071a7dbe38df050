"""The namespace purge request: drop and purge every table of a namespace (its nested namespaces
too when recursive), or of a whole catalog, with the same options for each table."""

from __future__ import annotations

from typing import Any

from pydantic import ConfigDict, Field, model_validator

from icepurge.contract.batch_steps import MAX_BATCH_TABLES
from icepurge.contract.names import NAMESPACE_ID_PREFIX
from icepurge.contract.purge_id import derived_id
from icepurge.contract.request import NamespaceLevels, PrintableName, PurgeOptions
from icepurge.contract.strict_model import FrozenModel
from icepurge.contract.table_selection import TableSelection
from icepurge.contract.validation import parse_as

RECURSIVE_MARK = "recursive"
# Work units a namespace purge runs at once by default: two default worker processes' activity
# slots (8 each), so a default fleet is kept busy.
DEFAULT_WINDOW = 16
# Temporal's default limits on one workflow's pending activities and pending child workflows
# (limit.numPendingActivities.error, limit.numPendingChildExecutions.error).
MAX_WINDOW = 2_000
# A purge of up to this many tables stays one workflow, as before trees; larger ones hand ranges
# of this many to child workflows (icepurge.contract.range_steps).
DEFAULT_RANGE_TABLES = 50_000
MAX_RANGE_TABLES = 10_000_000


class NamespacePurgeRequest(FrozenModel):
    model_config = ConfigDict(str_strip_whitespace=True)

    catalog: PrintableName = Field(min_length=1, max_length=255)
    namespace: NamespaceLevels = Field(
        default_factory=list,
        description="Namespace levels, outermost first; [] is the whole catalog (recursive, and "
        "`confirm` must equal the catalog's name).",
    )
    recursive: bool = Field(False, description="Also every nested namespace, deepest dropped first.")
    confirm: str | None = Field(
        None, max_length=255, description="The catalog's name, required to purge a whole catalog."
    )
    max_concurrent_tables: int = Field(
        DEFAULT_WINDOW,
        ge=1,
        le=MAX_WINDOW,
        description="Work units running at once: a batch of small tables counts once, as does a table "
        "purged by a workflow of its own. The default keeps a default fleet's activity slots busy; a "
        "service may set a lower bound (ICEPURGE_MAX_CONCURRENT_UNITS). At most "
        f"{MAX_WINDOW:,}: Temporal's own limit on one workflow's pending activities and children.",
    )
    batch_tables: int | None = Field(
        None,
        ge=0,
        le=MAX_BATCH_TABLES,
        description="Small tables purged together in one activity, this many at a time, each through "
        "the express lane's steps with its own purge id, counts and record (`icepurge purge status` "
        "reads it) but no workflow of its own and no events of its own; a table whose plan is "
        f"big gets its own table purge workflow. Unset: {MAX_BATCH_TABLES} wherever batches can "
        "take the options. 0 or 1: one workflow per table. Options the express lane doesn't take "
        "(dry run, soft delete, sweep, Spark) keep one workflow per table whatever this says.",
    )
    range_tables: int | None = Field(
        None,
        ge=1,
        le=MAX_RANGE_TABLES,
        description="A purge of more tables than this hands ranges of this many to child workflows, "
        "each with its own window (the namespace purge's split evenly) and history, so that no one "
        f"workflow bounds the rate. Unset: {DEFAULT_RANGE_TABLES:,}.",
    )
    selection: TableSelection | None = Field(
        None,
        description="Purge only the tables that match; the others stay, listed as skipped with the "
        "condition they failed, and so do the namespaces that hold them. Part of the purge's identity.",
    )
    requested_by: PrintableName = Field(min_length=1, max_length=255)
    request_id: str | None = Field(
        None,
        max_length=255,
        description="Names this namespace purge for good: a retried start with it returns the same "
        "one, even closed. Without it, a start attaches to the namespace's running purge, if any.",
    )
    notify_workflow_id: str | None = Field(
        None,
        min_length=1,
        max_length=1000,
        description="A workflow that receives the namespace purge's own events as 'icepurge_event' signals.",
    )
    tenant: str | None = Field(
        None,
        min_length=1,
        max_length=255,
        description="The fairness key this purge's tasks are dispatched under (default: the catalog): "
        "bulk purges of different keys share the workers in turn where the Temporal server enables "
        "fairness.",
    )
    options: PurgeOptions = Field(default_factory=PurgeOptions, description="Applied to every table's purge.")

    @model_validator(mode="after")
    def _whole_catalog_confirmed(self) -> NamespacePurgeRequest:
        if not self.namespace and self.confirm != self.catalog:
            raise ValueError(
                f"purging the whole catalog needs confirm set to the catalog's name ({self.catalog!r})"
            )
        if self.confirm is not None and self.confirm != self.catalog:
            raise ValueError(f"confirm must be the catalog's name ({self.catalog!r}) when it is given")
        if self.options.hold_namespace is not None:
            raise ValueError(
                "options.hold_namespace frees one table's identifier before its plan, for a drop "
                "someone waits on; a namespace purge drops each table after its plan: leave it unset"
            )
        self._listed_inside()
        return self

    def _listed_inside(self) -> None:
        if self.selection is None:
            return
        # Compared as dotted text, as the walk meets names: a level may itself hold a dot.
        prefix = ".".join(self.namespace) + "." if self.namespace else ""
        for name in self.selection.tables:
            if not name.startswith(prefix):
                raise ValueError(f"listed table {name!r} is outside {self.name}")
            if "." in name.removeprefix(prefix) and not self.walks_nested:
                raise ValueError(f"listed table {name!r} is outside {self.name} (not recursive)")

    @property
    def whole_catalog(self) -> bool:
        return not self.namespace

    @property
    def walks_nested(self) -> bool:
        return self.recursive or self.whole_catalog

    @property
    def name(self) -> str:
        return ".".join([self.catalog, *self.namespace]) if self.namespace else f"catalog {self.catalog}"


def parse_namespace_request(raw: Any) -> NamespacePurgeRequest:
    return parse_as(NamespacePurgeRequest, raw)


def namespace_purge_id_for(request: NamespacePurgeRequest) -> str:
    """ "icepurge-ns-" + readable + "-" + hash, as icepurge/contract/purge_id.py says, over the names
    catalog and levels and the identity ["<catalog>", [levels], "<request_id>" or null], with
    "recursive" appended for a recursive namespace purge: two scopes are two purges. (A whole
    catalog is always walked whole, so `recursive` changes nothing there, and neither its id.)
    A selection appends {"selection": TableSelection.identity()}: lists sorted and without
    repeats, the age in seconds, so two spellings of one selection are one purge."""
    identity: list[object] = [request.catalog, request.namespace, request.request_id]
    if request.namespace and request.recursive:
        identity.append(RECURSIVE_MARK)
    if request.selection is not None:
        identity.append({"selection": request.selection.identity()})
    names = [request.catalog, *request.namespace]
    return derived_id(NAMESPACE_ID_PREFIX, names, identity, request.options.dry_run)
