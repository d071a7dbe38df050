"""Inputs and outputs of the catalog steps of a purge: load, drop, the live-table guard and the
re-registration of an undrop. Catalog credentials never travel here: workers hold them."""

from __future__ import annotations

from pydantic import Field

from icepurge.contract.request import OverlapScope, PurgeRequest
from icepurge.contract.status import GuardName, GuardOutcome
from icepurge.contract.strict_model import FrozenModel, StrictModel


class TableRef(FrozenModel):
    purge_id: str
    catalog: str
    namespace: list[str]
    table: str

    @classmethod
    def of(cls, purge_id: str, request: PurgeRequest) -> TableRef:
        return cls(
            purge_id=purge_id, catalog=request.catalog, namespace=request.namespace, table=request.table
        )

    @property
    def identifier(self) -> tuple[str, ...]:
        return (*self.namespace, self.table)

    @property
    def name(self) -> str:
        return ".".join([self.catalog, *self.identifier])


class LoadedTable(StrictModel):
    """The snapshot a purge by name works from. Its FileIO properties may hold credentials the
    catalog vended: the payload codec seals them in history."""

    metadata_location: str
    file_io_properties: dict[str, str] = Field(repr=False)
    protection: GuardOutcome


class DropInput(StrictModel):
    table: TableRef
    metadata_location: str = Field(description="What the plan was made from: drop only if still current.")
    file_io_properties: dict[str, str] = Field(
        default_factory=dict, repr=False, description="To see whether the drop took the storage too."
    )


class DropResult(StrictModel):
    dropped: bool = Field(description="False: the entry was already gone (a retried drop).")
    storage_gone: bool = Field(
        False, description="The metadata file is gone after the drop: the catalog deleted storage."
    )


class GuardInput(StrictModel):
    table: TableRef
    metadata_location: str
    locations: list[str] = Field(description="The purged table's locations (from the plan).")
    scope: OverlapScope
    skip_own_entry: bool = Field(
        False,
        description="A dry run of a purge by name: the identifier's entry, which the real purge "
        "drops before its guard runs, is left out while it still uses the purged metadata.",
    )


class HoldInput(StrictModel):
    table: TableRef
    hold_namespace: str


class HeldTable(StrictModel):
    """The table as loaded before its hold (its protection checked under its own name), and where
    it is held now."""

    loaded: LoadedTable
    held: TableRef


class ReleaseInput(StrictModel):
    """Undrop of a held table: moved back to its own identifier."""

    held: TableRef
    table: TableRef
    metadata_location: str


class RegisterInput(StrictModel):
    table: TableRef
    metadata_location: str


class RegisterResult(StrictModel):
    registered: bool
    note: str


def guard_not_applied(why: str) -> GuardOutcome:
    return GuardOutcome(guard=GuardName.LIVE_TABLE, applied=False, passed=True, detail=f"not applied: {why}")


def resolved(request: PurgeRequest, loaded: LoadedTable) -> PurgeRequest:
    """A purge by name, once loaded, is a snapshot like any other; the caller's own FileIO
    properties win over the catalog's."""
    properties = {**loaded.file_io_properties, **request.file_io_properties}
    return request.model_copy(
        update={"metadata_location": loaded.metadata_location, "file_io_properties": properties}
    )


def checking_existence(request: PurgeRequest) -> PurgeRequest:
    """Deletes that ask first whether each file is there: exact already_missing counts where a
    catalog deleted the storage on drop (a bulk delete calls a gone key deleted)."""
    return request.with_options(check_existence=True)
