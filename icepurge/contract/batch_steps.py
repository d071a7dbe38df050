"""Inputs and outputs of the small-table batch of a namespace purge: one activity purges several
small tables by name, each through the express lane's own steps (load and plan, drop, guard,
deletes, finalize), and records each table's purge where `icepurge purge status` finds it. A table
the batch can't take whole (a big plan, a table that changed under it) goes back to the namespace
purge, which gives it a table purge workflow of its own."""

from __future__ import annotations

from pydantic import Field

from icepurge.contract.express_steps import straight_through
from icepurge.contract.namespace_steps import TableName
from icepurge.contract.request import PurgeOptions, PurgeRequest
from icepurge.contract.status import PurgeReport
from icepurge.contract.strict_model import StrictModel
from icepurge.contract.table_outcomes import TableTallies

# Tables purged at once inside one batch (its threads); the namespace purge's window counts each
# batch once.
MAX_BATCH_TABLES = 32


class BatchTable(StrictModel):
    purge_id: str = Field(description="The id this table's purge has, workflow or not.")
    request: PurgeRequest = Field(description="By name, as the namespace purge gives each table.")


class TableBatchInput(StrictModel):
    tables: list[BatchTable] = Field(min_length=1, max_length=MAX_BATCH_TABLES)


class BatchTableOutcome(StrictModel):
    """One table's end in a batch: a report (its purge ran, whatever it found), or handed back
    untouched (nothing dropped or deleted) for a purge of its own, with why."""

    purge_id: str
    report: PurgeReport | None = None
    handed_back: str | None = Field(None, description="Why the table needs its own purge.")


class TableBatchResult(StrictModel):
    outcomes: list[BatchTableOutcome]


class BatchTemplate(StrictModel):
    """What each table's request in a namespace purge's batch shares: all of it but the name."""

    catalog: str
    requested_by: str
    request_id: str = Field(description="The namespace purge's id and run chain: one purge per table.")
    notify_workflow_id: str = Field(description="The namespace purge that runs the batch.")
    options: PurgeOptions

    def request_for(self, name: TableName) -> PurgeRequest:
        return PurgeRequest(
            catalog=self.catalog,
            namespace=name.namespace,
            table=name.table,
            requested_by=self.requested_by,
            request_id=self.request_id,
            notify_workflow_id=self.notify_workflow_id,
            options=self.options,
        )


class RangeBatchInput(StrictModel):
    """A batch named by its place in the namespace purge's table list, not by its tables: the
    activity reads their names there, so the batch's history holds the same few hundred bytes
    whatever the names."""

    tree_location: str
    first: int = Field(ge=0, description="The batch's first table's place in the table list.")
    count: int = Field(ge=1, le=MAX_BATCH_TABLES)
    template: BatchTemplate
    listed_under: str | None = Field(
        None,
        description="The namespace purge whose table listing names the batch's tables, when a range "
        "of its tree runs the batch; None: the workflow that runs it.",
    )


class HandedBackTable(StrictModel):
    """A table the batch left untouched (nothing dropped or deleted): it gets a purge of its own."""

    index: int = Field(description="Its place in the table list.")
    name: TableName
    why: str


class RangeBatchResult(StrictModel):
    """Counts, not reports: each table's report stays in its record (table_record_path)."""

    tallies: TableTallies
    handed_back: list[HandedBackTable] = Field(default_factory=list)


def takes_batches(options: PurgeOptions, batch_tables: int | None) -> bool:
    """Batches take the purges the express lane takes; any other keeps one workflow per table.
    None: the default, batches wherever they can."""
    return (batch_tables is None or batch_tables > 1) and straight_through(options)


def batch_size(batch_tables: int | None) -> int:
    return MAX_BATCH_TABLES if batch_tables is None else batch_tables


# Under the state location: a batch keeps each table's purge report here (the view a table purge
# workflow gives of itself).
TABLE_RECORDS_FOLDER = "table-records"


def table_record_path(purge_id: str) -> str:
    return f"{TABLE_RECORDS_FOLDER}/{purge_id}.json"


# Under the state location: each batch names the tables it purged for its namespace purge, so the
# namespace purge's table listing finds tables that have no workflow (one object a batch).
BATCHED_TABLES_FOLDER = "batched-tables"


class BatchedTables(StrictModel):
    purge_ids: list[str] = Field(description="The batch's tables' purges, each with its record.")


def batched_tables_folder(parent_id: str) -> str:
    return f"{BATCHED_TABLES_FOLDER}/{parent_id}/"


def batched_tables_path(parent_id: str, first_purge_id: str) -> str:
    """Named by the batch's first table: a batch retried writes the same object again."""
    return f"{batched_tables_folder(parent_id)}{first_purge_id}.json"
