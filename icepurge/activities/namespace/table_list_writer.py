"""Writes a namespace purge's table list as the walk finds it: a page object each time a page of
names (or of skipped entries) fills, the index last. A retried walk writes the same pages again
over the first attempt's, and the index, written last, says how many there are."""

from __future__ import annotations

from icepurge.contract.names import FAILURE_SAMPLE_SIZE
from icepurge.contract.namespace_status import SkippedEntry
from icepurge.contract.namespace_steps import TableName
from icepurge.contract.table_list import (
    NamespaceSpan,
    SkippedEntriesPage,
    TableListIndex,
    TablesPage,
    skipped_page_location,
    tables_page_location,
)
from icepurge.state.state_store import StateStore


class TableListWriter:
    def __init__(self, state: StateStore, index_location: str, page_entries: int) -> None:
        self._state = state
        self._location = index_location
        self._page_entries = page_entries
        self._tables: list[TableName] = []
        self._skipped: list[SkippedEntry] = []
        self.tables_total = 0
        self.skipped_total = 0
        self.skipped_sample: list[SkippedEntry] = []

    def table(self, name: TableName) -> None:
        self._tables.append(name)
        self.tables_total += 1
        if len(self._tables) == self._page_entries:
            self._flush_tables()

    def skipped(self, entry: SkippedEntry) -> None:
        self._skipped.append(entry)
        self.skipped_total += 1
        if len(self.skipped_sample) < FAILURE_SAMPLE_SIZE:
            self.skipped_sample.append(entry)
        if len(self._skipped) == self._page_entries:
            self._flush_skipped()

    def finish(self, namespaces: list[NamespaceSpan]) -> None:
        if self._tables:
            self._flush_tables()
        if self._skipped:
            self._flush_skipped()
        index = TableListIndex(
            page_entries=self._page_entries,
            tables_total=self.tables_total,
            skipped_total=self.skipped_total,
            namespaces=namespaces,
        )
        self._state.write(self._location, index, compress=True)

    def _flush_tables(self) -> None:
        page = (self.tables_total - 1) // self._page_entries
        location = tables_page_location(self._location, page)
        self._state.write(location, TablesPage(tables=self._tables), compress=True)
        self._tables = []

    def _flush_skipped(self) -> None:
        page = (self.skipped_total - 1) // self._page_entries
        location = skipped_page_location(self._location, page)
        self._state.write(location, SkippedEntriesPage(skipped=self._skipped), compress=True)
        self._skipped = []
