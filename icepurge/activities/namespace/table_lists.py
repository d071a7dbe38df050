"""A namespace purge's table list, read from the state location a page or a batch at a time. The
last few lists read stay in memory: a namespace purge's pages and batches read its list one after
another, and two purges running at once on one worker would each read theirs whole again for
every batch if only the last one stayed. A list's location names the purge's run chain, so no
later purge under the same id can read it."""

from __future__ import annotations

import threading
from collections import OrderedDict

from pydantic import BaseModel, ConfigDict, Field
from temporalio.exceptions import ApplicationError

from icepurge.contract.namespace_status import SkippedEntry
from icepurge.contract.namespace_steps import TableName
from icepurge.state.state_store import StateStore

# Namespace purges whose lists one worker keeps at once.
KEPT_LISTS = 4


class NamespaceTree(BaseModel):
    """The enumeration's outcome, in the state location: never in workflow history."""

    model_config = ConfigDict(extra="forbid")

    tables: list[TableName]
    namespaces: list[list[str]] = Field(description="Walked namespaces, deepest first.")
    skipped: list[SkippedEntry]


class TableLists:
    def __init__(self, state: StateStore) -> None:
        self._state = state
        self._kept: OrderedDict[str, NamespaceTree] = OrderedDict()
        self._lock = threading.Lock()

    def tree(self, location: str) -> NamespaceTree:
        with self._lock:
            kept = self._kept.get(location)
            if kept is not None:
                self._kept.move_to_end(location)
                return kept
        raw = self._state.read(location)
        if raw is None:
            raise ApplicationError(
                f"the namespace purge's table list {location} is gone from the state location",
                non_retryable=True,
            )
        tree = NamespaceTree.model_validate_json(raw)
        with self._lock:
            self._kept[location] = tree
            while len(self._kept) > KEPT_LISTS:
                self._kept.popitem(last=False)
        return tree

    def names(self, location: str, offset: int, limit: int) -> list[TableName]:
        return self.tree(location).tables[offset : offset + limit]
