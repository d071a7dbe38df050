"""A namespace purge's table list, read from the state location a page at a time: the index, then
only the page objects that hold what is asked. The last pages read stay in memory, since a
purge's batches read its pages one after another, and two purges running at once on one worker
would each read theirs again for every batch if only the last stayed. A list's location names the
purge's run chain, so no later purge under the same id can read it.

A list written before pages (one `tree.json` object) is read whole, as then."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import TypeVar

from pydantic import Field
from temporalio.exceptions import ApplicationError

from icepurge.contract.namespace_status import SkippedEntry
from icepurge.contract.namespace_steps import TableName
from icepurge.contract.strict_model import StrictModel
from icepurge.contract.table_list import (
    NamespaceSpan,
    TableListIndex,
    TablesPage,
    is_legacy,
    pages_over,
    tables_page_location,
)
from icepurge.state.state_store import StateStore

# Objects one worker keeps at once: indexes are small; a page holds up to PAGE_ENTRIES names.
KEPT_INDEXES = 8
KEPT_PAGES = 8
# Legacy lists hold every name: as few as before pages.
KEPT_LEGACY = 2

_Kept = TypeVar("_Kept")


class NamespaceTree(StrictModel):
    """A list as written before pages: every table, namespace and skipped entry in one object."""

    tables: list[TableName]
    namespaces: list[list[str]] = Field(description="Walked namespaces, deepest first.")
    skipped: list[SkippedEntry]


class _Recent(OrderedDict[str, _Kept]):
    def __init__(self, size: int) -> None:
        super().__init__()
        self._size = size

    def keep(self, key: str, value: _Kept) -> None:
        self[key] = value
        while len(self) > self._size:
            self.popitem(last=False)


def _legacy_spans(tree: NamespaceTree) -> list[NamespaceSpan]:
    """Where each namespace's tables sit in a legacy list (the walk listed them together)."""
    runs: dict[tuple[str, ...], tuple[int, int]] = {}
    for index, table in enumerate(tree.tables):
        first, _ = runs.get(tuple(table.namespace), (index, index))
        runs[tuple(table.namespace)] = (first, index + 1)
    spans = []
    for levels in tree.namespaces:
        # A namespace with no table of its own in the list holds an empty span.
        first, end = runs.get(tuple(levels), (0, 0))
        spans.append(NamespaceSpan(levels=levels, first=first, end=end))
    return spans


class TableLists:
    def __init__(self, state: StateStore) -> None:
        self._state = state
        self._indexes: _Recent[TableListIndex] = _Recent(KEPT_INDEXES)
        self._pages: _Recent[list[TableName]] = _Recent(KEPT_PAGES)
        self._legacy: _Recent[NamespaceTree] = _Recent(KEPT_LEGACY)
        self._lock = threading.Lock()

    def _kept(self, recent: _Recent[_Kept], location: str, read: Callable[[bytes], _Kept]) -> _Kept:
        with self._lock:
            kept = recent.get(location)
            if kept is not None:
                recent.move_to_end(location)
                return kept
        raw = self._state.read(location)
        if raw is None:
            raise ApplicationError(
                f"the namespace purge's table list {location} is gone from the state location",
                non_retryable=True,
            )
        value = read(raw)
        with self._lock:
            recent.keep(location, value)
        return value

    def _tree(self, location: str) -> NamespaceTree:
        return self._kept(self._legacy, location, NamespaceTree.model_validate_json)

    def index(self, location: str) -> TableListIndex:
        if is_legacy(location):
            tree = self._tree(location)
            return TableListIndex(
                page_entries=max(1, len(tree.tables)),
                tables_total=len(tree.tables),
                skipped_total=len(tree.skipped),
                namespaces=_legacy_spans(tree),
            )
        return self._kept(self._indexes, location, TableListIndex.model_validate_json)

    def names(self, location: str, offset: int, limit: int) -> list[TableName]:
        if is_legacy(location):
            return self._tree(location).tables[offset : offset + limit]
        index = self.index(location)
        end = min(offset + limit, index.tables_total)
        if end <= offset:
            return []
        found: list[TableName] = []
        for page in pages_over(offset, end - offset, index.page_entries):
            names = self._kept(
                self._pages,
                tables_page_location(location, page),
                lambda raw: TablesPage.model_validate_json(raw).tables,
            )
            start = page * index.page_entries
            found += names[max(offset - start, 0) : end - start]
        return found
