"""What the front door does with each catalog it serves (ICEPURGE_FRONT_DOOR, JSON by catalog
name): the purge options a drop with purge starts with, and how long a drop waits for the table
to leave the upstream catalog before it answers "retry"."""

from __future__ import annotations

from enum import StrEnum

from pydantic import Field, model_validator

from icepurge.contract.request import MAX_PURGE_AFTER_SECONDS
from icepurge.contract.strict_model import StrictModel


class FrontDoorAuth(StrEnum):
    """Who authorizes a call: icepurge (service) or the upstream, with the caller's credentials."""

    SERVICE = "service"
    PASS_THROUGH = "pass_through"  # noqa: S105  # a mode's name, not a secret


class FrontDoorPolicy(StrictModel):
    auth: FrontDoorAuth = Field(
        FrontDoorAuth.SERVICE,
        description="service: callers present icepurge tokens (reads need `read`, the rest `drop`) "
        "and the front door calls the upstream as itself (SigV4 or its token). pass_through: "
        "icepurge checks nothing and every call, the drop included, goes upstream with the caller's "
        "own Authorization, so the upstream authorizes exactly as it does without icepurge.",
    )

    purge_after_seconds: int = Field(
        0,
        ge=0,
        le=MAX_PURGE_AFTER_SECONDS,
        description="Soft delete: the drop happens now, the deletes this much later (undrop meanwhile).",
    )
    live_table_guard: bool = Field(True, description="Refuse a purge whose files a live table still uses.")
    dry_run_only: bool = Field(
        False,
        description="A first rollout: a drop with purge goes to the upstream as it is (the upstream "
        "purges as it does today), once icepurge has planned a dry run of it, whose report lists what "
        "icepurge would have deleted.",
    )
    upstream_keeps_storage: bool = Field(
        False,
        description="The upstream leaves a table's files in place on a plain drop (Polaris, "
        "Lakekeeper, Gravitino, Nessie, ...): a drop with purge then drops first and plans after, so "
        "it answers in the same time whatever the table's size. Off (S3 Tables, SeaweedFS: the "
        "upstream deletes storage on drop): icepurge plans first, and the answer waits for the plan.",
    )
    hold_namespace: str | None = Field(
        None,
        min_length=1,
        max_length=255,
        description="For an upstream that deletes storage on drop (S3 Tables, SeaweedFS): a drop "
        "with purge moves the table into this namespace (a rename, as fast whatever its size) and "
        "answers; the plan and the upstream's drop follow in the purge. With purge_after_seconds, "
        "undrop moves it back. Unset: the answer waits for the plan and the upstream's drop.",
    )
    purge_unspecified_drops: bool = Field(
        False,
        description="A table DELETE that does not say purgeRequested is a drop with purge too (the "
        "spec's default is false). Iceberg's Spark runtimes up to 1.10 send exactly that for "
        "`DROP TABLE ... PURGE` (then delete the files themselves if they still can), and for a "
        "plain `DROP TABLE` alike: on this catalog both become icepurge purges. An explicit "
        "purgeRequested=false (PyIceberg's drop_table) stays a plain drop.",
    )
    drop_wait_seconds: float = Field(
        30.0,
        gt=0,
        le=600,
        description="How long a DELETE waits for the table's drop; after it, 503 and the client retries "
        "(the retry attaches to the same purge).",
    )

    confirm_drop_seconds: int = Field(
        900,
        ge=30,
        le=86_400,
        description="Pass-through mode: how long a purge waits, deleting nothing, for the front door "
        "to confirm the caller's drop; a client's retry of a drop whose front door died must come "
        "within it, else the purge ends DropUnconfirmed (rerun it once the table is gone).",
    )

    @model_validator(mode="after")
    def _hold_fits(self) -> FrontDoorPolicy:
        if self.hold_namespace is None:
            return self
        if self.upstream_keeps_storage:
            raise ValueError(
                "hold_namespace is for an upstream that deletes storage on drop; one that keeps it "
                "(upstream_keeps_storage) answers as fast without a hold: set one"
            )
        if self.auth is FrontDoorAuth.PASS_THROUGH:
            raise ValueError(
                "hold_namespace needs auth service: in pass_through the caller's own credentials "
                "drop the table, and icepurge moves nothing with them"
            )
        return self

    def purge_options(self) -> dict[str, object]:
        return {
            "purge_after_seconds": self.purge_after_seconds,
            "live_table_guard": self.live_table_guard,
            "dry_run": self.dry_run_only,
            "drop_before_plan": self.upstream_keeps_storage,
            "hold_namespace": self.hold_namespace,
        }
