"""Inputs and outputs of the small-table batch of a namespace purge: one activity purges several
small tables by name, each through the express lane's own steps (load and plan, drop, guard,
deletes, finalize), and records each table's purge where `icepurge purge status` finds it. A table
the batch can't take whole (a big plan, a table that changed under it) goes back to the namespace
purge, which gives it a table purge workflow of its own."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from icepurge.contract.express_steps import straight_through
from icepurge.contract.request import PurgeOptions, PurgeRequest
from icepurge.contract.status import PurgeReport

# Tables purged at once inside one batch (its threads); the namespace purge's window counts them.
MAX_BATCH_TABLES = 32


class BatchTable(BaseModel):
    model_config = ConfigDict(extra="forbid")

    purge_id: str = Field(description="The id this table's purge has, workflow or not.")
    request: PurgeRequest = Field(description="By name, as the namespace purge gives each table.")


class TableBatchInput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    tables: list[BatchTable] = Field(min_length=1, max_length=MAX_BATCH_TABLES)


class BatchTableOutcome(BaseModel):
    """One table's end in a batch: a report (its purge ran, whatever it found), or handed back
    untouched (nothing dropped or deleted) for a purge of its own, with why."""

    model_config = ConfigDict(extra="forbid")

    purge_id: str
    report: PurgeReport | None = None
    handed_back: str | None = Field(None, description="Why the table needs its own purge.")


class TableBatchResult(BaseModel):
    model_config = ConfigDict(extra="forbid")

    outcomes: list[BatchTableOutcome]


def takes_batches(options: PurgeOptions, batch_tables: int) -> bool:
    """Batches take the purges the express lane takes; any other keeps one workflow per table."""
    return batch_tables > 1 and straight_through(options)


# Under the state location: a batch keeps each table's purge report here (the view a table purge
# workflow gives of itself).
TABLE_RECORDS_FOLDER = "table-records"


def table_record_path(purge_id: str) -> str:
    return f"{TABLE_RECORDS_FOLDER}/{purge_id}.json"


# Under the state location: each batch names the tables it purged for its namespace purge, so the
# namespace purge's table listing finds tables that have no workflow (one object a batch).
BATCHED_TABLES_FOLDER = "batched-tables"


class BatchedTables(BaseModel):
    model_config = ConfigDict(extra="forbid")

    purge_ids: list[str] = Field(description="The batch's tables' purges, each with its record.")


def batched_tables_folder(parent_id: str) -> str:
    return f"{BATCHED_TABLES_FOLDER}/{parent_id}/"


def batched_tables_path(parent_id: str, first_purge_id: str) -> str:
    """Named by the batch's first table: a batch retried writes the same object again."""
    return f"{batched_tables_folder(parent_id)}{first_purge_id}.json"
