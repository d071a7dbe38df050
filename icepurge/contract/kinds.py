"""What kind a listed purge is, apart from the listing's models: the command line names it
(`purge list --kind`) without loading pydantic."""

from __future__ import annotations

from enum import StrEnum


class PurgeKind(StrEnum):
    """A purge of one table, or of a namespace tree or a whole catalog (which starts table purges)."""

    TABLE = "table"
    NAMESPACE = "namespace"
