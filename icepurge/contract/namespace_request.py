"""The namespace purge request: drop and purge every table of a namespace (its nested namespaces
too when recursive), or of a whole catalog, with the same options for each table."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from icepurge.contract.batch_steps import MAX_BATCH_TABLES
from icepurge.contract.names import NAMESPACE_ID_PREFIX
from icepurge.contract.purge_id import derived_id
from icepurge.contract.request import PurgeOptions, printable
from icepurge.contract.validation import InvalidPurgeRequestError, describe_validation_error

RECURSIVE_MARK = "recursive"


class NamespacePurgeRequest(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, str_strip_whitespace=True)

    catalog: str = Field(min_length=1, max_length=255)
    namespace: list[str] = Field(
        default_factory=list,
        description="Namespace levels, outermost first; [] is the whole catalog (recursive, and "
        "`confirm` must equal the catalog's name).",
    )
    recursive: bool = Field(False, description="Also every nested namespace, deepest dropped first.")
    confirm: str | None = Field(
        None, max_length=255, description="The catalog's name, required to purge a whole catalog."
    )
    max_concurrent_tables: int = Field(4, ge=1, le=64, description="Table purges running at once.")
    batch_tables: int = Field(
        0,
        ge=0,
        le=MAX_BATCH_TABLES,
        description="Small tables purged together in one activity, this many at a time, each through "
        "the express lane's steps with its own purge id, counts and report (`icepurge purge status` "
        "reads its record) but no workflow of its own and no events of its own; a table whose plan is "
        "big gets its own table purge workflow. For namespaces of many small tables: the per-table "
        "workflow is what bounds their pace. 0 or 1: one workflow per table. Ignored (one workflow "
        "per table) with options the express lane doesn't take: dry run, soft delete, sweep, Spark.",
    )
    requested_by: str = Field(min_length=1, max_length=255)
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
    options: PurgeOptions = Field(default_factory=PurgeOptions, description="Applied to every table's purge.")

    @field_validator("namespace")
    @classmethod
    def _levels(cls, levels: list[str]) -> list[str]:
        if any(not level for level in levels):
            raise ValueError("namespace levels must be non-empty strings")
        for level in levels:
            printable(level)
        return levels

    @field_validator("catalog", "requested_by")
    @classmethod
    def _printable(cls, value: str) -> str:
        return printable(value)

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
        return self

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
    if isinstance(raw, NamespacePurgeRequest):
        return raw
    try:
        return NamespacePurgeRequest.model_validate(raw)
    except ValidationError as error:
        raise InvalidPurgeRequestError(describe_validation_error(error)) from None


def namespace_purge_id_for(request: NamespacePurgeRequest) -> str:
    """ "icepurge-ns-" + readable + "-" + hash, as icepurge/contract/purge_id.py says, over the names
    catalog and levels and the identity ["<catalog>", [levels], "<request_id>" or null], with
    "recursive" appended for a recursive namespace purge: two scopes are two purges. (A whole
    catalog is always walked whole, so `recursive` changes nothing there, and neither its id.)"""
    identity: list[object] = [request.catalog, request.namespace, request.request_id]
    if request.namespace and request.recursive:
        identity.append(RECURSIVE_MARK)
    names = [request.catalog, *request.namespace]
    return derived_id(NAMESPACE_ID_PREFIX, names, identity, request.options.dry_run)
