"""Names shared by every process that talks to icepurge's workflows; kept in one place."""

from typing import Final

WORKFLOW_TYPE: Final = "PurgeTable"
NAMESPACE_WORKFLOW_TYPE: Final = "PurgeNamespace"
NAMESPACE_ID_PREFIX: Final = "icepurge-ns-"
# A range of a namespace purge's table list, purged by a child workflow of its own (a tree).
TABLE_RANGE_WORKFLOW_TYPE: Final = "PurgeTableRange"
TASK_QUEUE: Final = "icepurge"
WORKFLOW_ID_PREFIX: Final = "icepurge-"
STATUS_QUERY: Final = "status"
CHUNK_PROGRESS_SIGNAL: Final = "chunk_progress"
STEP_RETRYING_SIGNAL: Final = "step_retrying"
CHUNKS_READY_SIGNAL: Final = "chunks_ready"
DROP_CONFIRMED_SIGNAL: Final = "drop_confirmed"
# Sent to the workflow a request names in notify_workflow_id, one per event.
EVENT_SIGNAL: Final = "icepurge_event"
PAUSE_UPDATE: Final = "pause"
RESUME_UPDATE: Final = "resume"
RATE_BUDGET_UPDATE: Final = "set_rate_budget"
UNDROP_UPDATE: Final = "undrop"
EXPEDITE_UPDATE: Final = "expedite"
AWAIT_STAGE_UPDATE: Final = "await_stage"
# From a namespace purge to its table purges: pause, resume, the budget share.
NAMESPACE_CONTROL_SIGNAL: Final = "namespace_control"
# From a range of a namespace purge to the namespace purge: its tables' tallies so far.
RANGE_PROGRESS_SIGNAL: Final = "range_progress"

PLAN_ACTIVITY: Final = "plan_purge"
CHUNK_ACTIVITY: Final = "delete_content_chunk"
FINALIZE_ACTIVITY: Final = "finalize_purge"
DELIVER_EVENTS_ACTIVITY: Final = "deliver_events"
LOAD_TABLE_ACTIVITY: Final = "load_table"
DROP_TABLE_ACTIVITY: Final = "drop_table"
LIVE_TABLE_GUARD_ACTIVITY: Final = "check_live_tables"
REGISTER_TABLE_ACTIVITY: Final = "register_table"
HOLD_TABLE_ACTIVITY: Final = "hold_table"
RELEASE_HELD_TABLE_ACTIVITY: Final = "release_held_table"
ENUMERATE_ACTIVITY: Final = "enumerate_namespace"
TABLE_PAGE_ACTIVITY: Final = "read_table_page"
DROP_NAMESPACES_ACTIVITY: Final = "drop_empty_namespaces"
SWEEP_ACTIVITY: Final = "sweep_location"
# The express lane: a table whose plan fits one chunk (icepurge.contract.express_steps).
LOAD_AND_PLAN_ACTIVITY: Final = "load_and_plan"
# Load, plan and drop, the plan kept before the drop: no workflow task between plan and drop.
LOAD_PLAN_AND_DROP_ACTIVITY: Final = "load_plan_and_drop"
FINISH_SMALL_PURGE_ACTIVITY: Final = "finish_small_purge"
# A small purge by snapshot: plan, guard, deletes and finalize in one step.
PLAN_AND_FINISH_ACTIVITY: Final = "plan_and_finish_small"
# A namespace purge's small tables, several per activity (icepurge.contract.batch_steps).
PURGE_TABLE_BATCH_ACTIVITY: Final = "purge_table_batch"
# A batch named by its place in the table list (a namespace purge started since slim batches).
PURGE_RANGE_BATCH_ACTIVITY: Final = "purge_range_batch"

# Search-attribute keys, registered on the dev server at start-up (name, Temporal type).
SEARCH_ATTRIBUTES: Final[tuple[tuple[str, str], ...]] = (
    ("PurgeState", "Keyword"),
    ("PurgeCatalog", "Keyword"),
    ("PurgeNamespace", "Keyword"),
    ("PurgeTable", "Keyword"),
    ("PurgeRequestedBy", "Keyword"),
    ("PurgeFilesTotal", "Int"),
    ("PurgeFilesDeleted", "Int"),
    ("PurgeFilesFailed", "Int"),
    ("PurgeScheduledFor", "Datetime"),
    # A namespace purge's id on each of its table purges. (The dev server's SQLite visibility
    # takes at most 3 Int attributes: a namespace purge's table counts live in its status.)
    ("PurgeParent", "Keyword"),
)

# Failure types the workflow and clients recognise (ApplicationError.type).
# The memo key holding a FAILED purge's reason, and how much of it.
ERROR_MEMO: Final = "error"
# What a running purge waits for (a step retried after a failed attempt); gone once it moves on.
WAITING_MEMO: Final = "waiting"
# What a closed purge's counts don't say by themselves (status.outcome_note).
OUTCOME_MEMO: Final = "outcome"
ERROR_INVALID_REQUEST: Final = "InvalidPurgeRequest"
ERROR_METADATA_NOT_FOUND: Final = "MetadataNotFound"
ERROR_METADATA_ACCESS_DENIED: Final = "MetadataAccessDenied"
ERROR_METADATA_CORRUPT: Final = "MetadataCorrupt"
ERROR_UNSUPPORTED_FORMAT: Final = "UnsupportedFormatVersion"
ERROR_STATE_LOCATION: Final = "StateLocationUnavailable"
ERROR_STALE_ATTEMPT: Final = "StaleAttempt"
ERROR_ENGINE_UNAVAILABLE: Final = "EngineUnavailable"
ERROR_STORE_UNREACHABLE: Final = "StoreUnreachable"
ERROR_CONTROL_REJECTED: Final = "ControlRejected"
ERROR_CATALOG_NOT_CONFIGURED: Final = "CatalogNotConfigured"
ERROR_CATALOG_UNAVAILABLE: Final = "CatalogUnavailable"
ERROR_TABLE_NOT_FOUND: Final = "TableNotFound"
ERROR_TABLE_CHANGED: Final = "TableChanged"
ERROR_PROTECTED: Final = "Protected"
ERROR_LIVE_TABLE: Final = "LiveTable"
ERROR_STORAGE_GONE: Final = "StorageDeletedOnDrop"
ERROR_DROP_UNCONFIRMED: Final = "DropUnconfirmed"
ERROR_IDENTIFIER_TAKEN: Final = "IdentifierTaken"
ERROR_NAMESPACE_NOT_FOUND: Final = "NamespaceNotFound"
# A table or namespace property that keeps icepurge from dropping it.
PROTECTED_PROPERTY: Final = "icepurge.protected"

# Bounded so that status and results stay far below Temporal's payload limits.
FAILURE_SAMPLE_SIZE: Final = 20
