"""A namespace purge's table list, read from the state location a page or a batch at a time. The
last list read stays in memory: a namespace purge's pages and batches read it one after another.
Its location names the purge's run chain, so no later purge under the same id can read it."""

from __future__ import annotations

import threading

from pydantic import BaseModel, ConfigDict, Field
from temporalio.exceptions import ApplicationError

from icepurge.contract.namespace_status import SkippedEntry
from icepurge.contract.namespace_steps import TableName
from icepurge.state.state_store import StateStore


class NamespaceTree(BaseModel):
    """The enumeration's outcome, in the state location: never in workflow history."""

    model_config = ConfigDict(extra="forbid")

    tables: list[TableName]
    namespaces: list[list[str]] = Field(description="Walked namespaces, deepest first.")
    skipped: list[SkippedEntry]


class TableLists:
    def __init__(self, state: StateStore) -> None:
        self._state = state
        self._cached: tuple[str, NamespaceTree] | None = None
        self._lock = threading.Lock()

    def tree(self, location: str) -> NamespaceTree:
        with self._lock:
            if self._cached is not None and self._cached[0] == location:
                return self._cached[1]
        raw = self._state.read(location)
        if raw is None:
            raise ApplicationError(
                f"the namespace purge's table list {location} is gone from the state location",
                non_retryable=True,
            )
        tree = NamespaceTree.model_validate_json(raw)
        with self._lock:
            self._cached = (location, tree)
        return tree

    def names(self, location: str, offset: int, limit: int) -> list[TableName]:
        return self.tree(location).tables[offset : offset + limit]
