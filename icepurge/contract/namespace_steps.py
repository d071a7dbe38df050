"""Inputs and outputs of a namespace purge's steps: enumerate the tree (its lists go to the state
location), read the table list a page at a time, drop the namespaces left empty."""

from __future__ import annotations

from pydantic import Field

from icepurge.contract.namespace_status import SkippedEntry
from icepurge.contract.strict_model import FrozenModel, StrictModel
from icepurge.contract.table_selection import TableSelection

# Bounded so that a page stays far below Temporal's payload limits, whatever the names' length.
TABLE_PAGE_SIZE = 100


class TableName(FrozenModel):
    namespace: list[str]
    table: str


class EnumerateInput(StrictModel):
    purge_id: str
    catalog: str
    namespace: list[str]
    nested: bool = Field(description="Walk nested namespaces too.")
    run_chain: str | None = Field(
        None,
        description="The namespace purge's first run id: its table list is kept apart from any "
        "other purge's under the same id. None: a purge started before run-scoped state.",
    )
    selection: TableSelection | None = None
    cutoff_ms: int | None = Field(
        None, description="The selection's older_than from the enumeration's start, in epoch ms."
    )


class EnumerationSummary(StrictModel):
    tree_location: str
    tables_total: int
    namespaces_total: int
    entries_skipped: int
    tables_unselected: int = Field(0, description="Tables found that the selection left alone.")
    skipped_sample: list[SkippedEntry]


class TablePageInput(StrictModel):
    tree_location: str
    offset: int = Field(ge=0)
    limit: int = Field(TABLE_PAGE_SIZE, ge=1, le=TABLE_PAGE_SIZE)


class TablePage(StrictModel):
    tables: list[TableName]


class DropNamespacesInput(StrictModel):
    purge_id: str
    catalog: str
    tree_location: str
    preview: bool = Field(False, description="A dry run: say what would be dropped, drop nothing.")
    kept_tables: list[int] = Field(
        default_factory=list,
        description="A preview's tables (places in the table list) that the real purge would not "
        "purge (failed, skipped, cancelled): their namespaces would stay.",
    )


class DropNamespacesResult(StrictModel):
    dropped: int
    kept_total: int
    kept_sample: list[SkippedEntry]
