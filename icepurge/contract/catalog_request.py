"""A purge by name: the catalog drops the table, icepurge purges the snapshot it had."""

from __future__ import annotations

from pydantic import ConfigDict, Field

from icepurge.contract.request import PurgeOptions
from icepurge.contract.strict_model import FrozenModel


class CatalogPurgeRequest(FrozenModel):
    """Drop a table from the catalog in the path and purge it: load, plan, drop, delete."""

    model_config = ConfigDict(str_strip_whitespace=True)

    namespace: list[str] = Field(min_length=1, description="Namespace levels, outermost first.")
    table: str = Field(min_length=1, max_length=255)
    options: PurgeOptions = Field(default_factory=PurgeOptions)
    requested_by: str | None = Field(
        None, min_length=1, max_length=255, description="Default: the token's name."
    )
    request_id: str | None = Field(
        None,
        max_length=255,
        description="Names this purge for good: a retried start with it returns the same purge, "
        "even closed. Without it, a start attaches to the table's running purge, if any.",
    )
    notify_workflow_id: str | None = Field(None, min_length=1, max_length=1000)
