"""The purge request: the JSON contract a catalog in any language sends to start a purge."""

from __future__ import annotations

import unicodedata
from enum import StrEnum
from typing import Annotated
from urllib.parse import quote

from pydantic import AfterValidator, ConfigDict, Field, field_validator, model_validator

from icepurge.contract.schemes import SUPPORTED_SCHEMES, names_a_scheme, scheme_of
from icepurge.contract.strict_model import FrozenModel


def encode_namespace(levels: list[str]) -> str:
    """Levels joined by 0x1F and percent-encoded, as the Iceberg REST spec puts them in URLs."""
    return quote("\x1f".join(levels), safe="")


class Engine(StrEnum):
    AUTO = "auto"
    LOCAL = "local"
    SPARK = "spark"


class OverlapScope(StrEnum):
    TABLE = "table"
    NAMESPACE = "namespace"
    CATALOG = "catalog"


# A year: longer windows belong to a catalog's own retention, not a waiting purge.
MAX_PURGE_AFTER_SECONDS = 366 * 86_400


class PurgeOptions(FrozenModel):
    dry_run: bool = Field(False, description="Plan and list the would-delete set; delete nothing.")
    engine: Engine = Field(
        Engine.AUTO,
        description="Where deletes run: 'local' threads, 'spark', or 'auto' (Spark above a threshold).",
    )
    concurrency: int = Field(8, ge=1, le=64, description="Delete requests in flight per chunk.")
    chunk_window: int = Field(2, ge=1, le=16, description="Chunk activities running at once.")
    delete_while_planning: bool = Field(
        True,
        description="Start deleting content files as soon as planning hands out its first chunks "
        "(purges by snapshot without a soft-delete window), which it does when it has long enough "
        "left to read to pay for it (the worker's ICEPURGE_OVERLAP_MIN_SECONDS); off = only once "
        "the plan is complete.",
    )
    bucket_requests_per_second: float | None = Field(
        None,
        gt=0,
        le=100_000,
        description=(
            "Delete-request budget per bucket, shared by all of this purge's delete tasks; "
            "unset = as fast as the store answers."
        ),
    )
    history_sweep: bool = Field(
        True,
        description=(
            "Also delete files reachable only from older metadata files (snapshots expired "
            "without file cleanup), inside the table's locations. Off = strict Iceberg parity."
        ),
    )
    location_guard: bool = Field(
        True, description="Skip (and report) reachable files outside the table's locations."
    )
    progress_event_seconds: float = Field(
        30.0, ge=1, le=86_400, description="Least time between two progress events to the sinks."
    )
    check_existence: bool = Field(
        False,
        description="Ask the store whether each file exists before deleting it, so files already "
        "gone count as already_missing: S3's bulk delete reports them deleted. On S3 one listing "
        "answers for a folder that one page holds, else a HEAD per file. Turned on by itself when "
        "a catalog's drop deleted the table's storage, and on a rerun.",
    )
    purge_after_seconds: int = Field(
        0,
        ge=0,
        le=MAX_PURGE_AFTER_SECONDS,
        description="Soft delete: plan (and drop, by name) at once, then wait this long in state "
        "SCHEDULED, deleting nothing, until the time comes or an operator expedites or undrops.",
    )
    live_table_guard: bool = Field(
        True,
        description="Just before the first delete, refuse (LiveTable) when the catalog holds a "
        "table using the purged metadata or locations. Applied when the catalog is configured.",
    )
    sweep_location: bool = Field(
        False,
        description="After the metadata-driven deletes, list the table's location and delete what "
        "no metadata file knew (failed writes, aborted commits): only objects older than the purge's "
        "start minus sweep_grace_seconds, and only when no live table of the catalog overlaps the "
        "location. Counted as `swept`, apart from the planned files.",
    )
    sweep_grace_seconds: int = Field(
        86_400,
        ge=0,
        le=MAX_PURGE_AFTER_SECONDS,
        description="Objects modified later than the purge's start minus this are kept by the sweep "
        "(a re-created table's, a late writer's).",
    )
    drop_before_plan: bool = Field(
        False,
        description="A purge by name drops the table right after loading it and plans from the "
        "snapshot it loaded, so the drop takes the same time whatever the table's size. Only for "
        "catalogs that keep a table's storage on a plain drop (most REST catalogs, SQL, Glue); a "
        "catalog that deletes storage on drop (S3 Tables, SeaweedFS) needs the plan first (off).",
    )
    express_lane: bool = Field(
        True,
        description="A purge by name loads and plans in one activity and, when its plan is small "
        "(at most 1,000 files, the local engine), guards, deletes and finalizes in one activity "
        "after its drop: the same steps, checkpoints and counts in three activity round trips. "
        "false: each step is an activity of its own, shown as such in the Web UI.",
    )
    await_drop_seconds: int = Field(
        0,
        ge=0,
        le=86_400,
        description="A purge by snapshot whose caller drops the table itself (the front door's "
        "pass-through mode): once planned it waits this long in DROPPING, deleting nothing, for the "
        "caller's drop_confirmed signal; without it the purge fails DropUnconfirmed with nothing "
        "deleted. 0: no wait.",
    )
    overlap_scope: OverlapScope = Field(
        OverlapScope.NAMESPACE,
        description="Which tables the live-table guard compares locations with: the identifier's "
        "table, every table of its namespace, or every table of the catalog.",
    )
    hold_namespace: str | None = Field(
        None,
        min_length=1,
        max_length=255,
        description="A purge by name first moves the table (a rename: no file moves) into this "
        "namespace of its catalog under a name of its own, and counts it dropped from then: its "
        "identifier is free at once, whatever the table's size. The plan and the catalog's own "
        "drop follow, from the held table. For catalogs that delete storage on drop (S3 Tables, "
        "SeaweedFS), where the drop otherwise waits for the plan; with a soft-delete window, undrop "
        "moves the table back. Not with drop_before_plan, which answers as fast without a hold.",
    )

    @field_validator("hold_namespace")
    @classmethod
    def _printable_hold(cls, value: str | None) -> str | None:
        return printable(value) if value is not None else None

    @model_validator(mode="after")
    def _one_way_to_drop_fast(self) -> PurgeOptions:
        if self.hold_namespace is not None and self.drop_before_plan:
            raise ValueError(
                "hold_namespace and drop_before_plan are two ways to answer a drop fast: a catalog "
                "that keeps storage on drop takes drop_before_plan, one that deletes it "
                "hold_namespace; set one"
            )
        return self


def printable(value: str) -> str:
    """Names end up in search attributes and visibility queries, where a control character (NUL,
    the 0x1F namespace separator, ...) breaks the store's query language."""
    if any(unicodedata.category(character) == "Cc" for character in value):
        raise ValueError("control characters are not allowed")
    return value


def namespace_levels(levels: list[str]) -> list[str]:
    if any(not level for level in levels):
        raise ValueError("namespace levels must be non-empty strings")
    for level in levels:
        printable(level)
    return levels


PrintableName = Annotated[str, AfterValidator(printable)]
NamespaceLevels = Annotated[list[str], AfterValidator(namespace_levels)]


class PurgeRequest(FrozenModel):
    """A snapshot of a dropped table, handed over by its catalog; or, without a metadata
    location, a table to drop and purge by name."""

    model_config = ConfigDict(str_strip_whitespace=True)

    catalog: PrintableName = Field(min_length=1, max_length=255)
    namespace: NamespaceLevels = Field(min_length=1, description="Namespace levels, outermost first.")
    table: PrintableName = Field(min_length=1, max_length=255)
    metadata_location: str | None = Field(
        None,
        min_length=1,
        description="URI of the table's current metadata JSON. Absent: a purge by name, where "
        "icepurge loads the table from the named catalog (configured on its workers), plans, "
        "drops the catalog entry (no purge) and then deletes.",
    )
    file_io_properties: dict[str, str] = Field(
        default_factory=dict,
        repr=False,
        description="PyIceberg FileIO properties (s3.endpoint, s3.access-key-id, ...). Never logged.",
    )
    requested_by: PrintableName = Field(min_length=1, max_length=255)
    request_id: str | None = Field(None, max_length=255)
    notify_workflow_id: str | None = Field(
        None,
        min_length=1,
        max_length=1000,
        description="A workflow (in icepurge's namespace) that receives each event as an "
        "'icepurge_event' signal, e.g. the catalog's own drop-table workflow.",
    )
    options: PurgeOptions = Field(default_factory=PurgeOptions)

    @field_validator("metadata_location")
    @classmethod
    def _supported_scheme(cls, location: str | None) -> str | None:
        if location is None:
            return None
        if not names_a_scheme(location) or scheme_of(location) not in SUPPORTED_SCHEMES:
            supported = ", ".join(sorted(SUPPORTED_SCHEMES))
            raise ValueError(f"metadata_location needs a URI scheme among: {supported}")
        if not location.endswith(".json") and not location.endswith(".json.gz"):
            raise ValueError("metadata_location must point to a table metadata JSON file")
        return location

    @property
    def by_name(self) -> bool:
        """Started by name: icepurge loads and drops the table itself."""
        return self.metadata_location is None

    def snapshot_location(self) -> str:
        """The metadata location of a snapshot request, or of a purge by name once loaded."""
        if self.metadata_location is None:
            raise ValueError(
                f"the purge of {self.table_name} has no metadata location until its table is loaded"
            )
        return self.metadata_location

    @property
    def identifier(self) -> tuple[str, ...]:
        return (*self.namespace, self.table)

    def with_options(self, **changes: object) -> PurgeRequest:
        """The same request with some options changed by icepurge itself (already valid)."""
        return self.model_copy(update={"options": self.options.model_copy(update=changes)})

    @property
    def table_name(self) -> str:
        return ".".join([self.catalog, *self.namespace, self.table])
